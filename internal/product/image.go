package product

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/publish"
)

// Image is one built multi-arch image, ready to publish.
type Image struct {
	Name      string
	Index     v1.ImageIndex
	Digest    v1.Hash
	Platforms []Platform
	Tags      []string
	Contract  string
	BaseName  string
}

// WithIndex sets im's Index and Digest from idx, or passes err on; the
// one way build, merge and join finish an Image.
func (im *Image) WithIndex(idx v1.ImageIndex, err error) (*Image, error) {
	if err != nil {
		return nil, err
	}
	im.Index = idx
	if im.Digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	return im, nil
}

// Platform is one platform's manifest of an Image.
type Platform struct {
	Platform v1.Platform
	Digest   v1.Hash
	// Size is the manifest's own size in bytes (its index entry's size).
	Size int64
	// CompressedSize is the image's config and layers as its manifest
	// lists them (see manifest.CompressedSize): what a pull downloads.
	CompressedSize int64
	Tags           []string
	// Attestation is the platform image's SBOM and provenance; nil with
	// attestations off.
	Attestation *Attestation
	// Referrers are manifests about the image that a run copies as they
	// are (index: the source's referrers), published beside Attestation's.
	Referrers []publish.Referrer
	// CosignTags are cosign's tags about the image a run copies
	// (index: the source's sha256-<hex>.sig and .att).
	CosignTags []publish.CosignTag
}

// Result is what a source produced: its images, in the plan's order.
type Result struct {
	Images []Image
}
