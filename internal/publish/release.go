package publish

import (
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Image is one multi-arch image of a release.
type Image struct {
	// Name is the image's name in a layout ("gitlab-runner-helper"); empty for
	// a single-image release, whose layout entries are named by tag alone.
	Name string
	// Repository is the registry destination, e.g.
	// registry.example.com/group/gitlab-runner-helper, parsed by the caller
	// (which knows which hosts may be reached insecurely).
	Repository name.Repository
	Index      v1.ImageIndex
	// Tags point at the index.
	Tags []string
	// PlatformTags point at one platform's manifest.
	PlatformTags []PlatformTag
	// Referrers are manifests about the image's platform manifests (OCI
	// 1.1 referrers: attestations). A registry gets them by digest with
	// the image; where it has no referrers API, each subject's fallback
	// tag (sha256-<hex>) lists them, written before the image's tags. A
	// layout takes none.
	Referrers []Referrer
	// CosignTags are cosign's tags (sha256-<hex>.sig, .att) about the
	// image's platform manifests, copied from where the image came from:
	// each is merged with what the repository holds under that tag and
	// written before the image's tags (see copyCosignTags). A layout
	// takes none.
	CosignTags []CosignTag
}

// CosignTag is a cosign tag about one of an image's platform manifests.
type CosignTag struct {
	// Tag is sha256-<hex>.sig or .att; Image the signatures or
	// attestations it holds, one per layer.
	Tag   string
	Image v1.Image
}

// Referrer is a manifest whose subject is one of an image's platform
// manifests.
type Referrer struct {
	// Subject is the platform manifest's digest.
	Subject v1.Hash
	// Manifest is the referrer: its raw manifest names Subject.
	Manifest v1.Image
	// Entry is its descriptor in a referrers index (artifactType and
	// annotations included).
	Entry v1.Descriptor
}

// PlatformTag is a tag for one platform's manifest.
type PlatformTag struct {
	Manifest v1.Hash
	Tag      string
}

// tagOrder lists every tag of images in publishing order: index tags, then
// platform tags, then "latest".
func tagOrder(images []Image) []pendingTag {
	var first, platform, latest []pendingTag
	for i, img := range images {
		digest, _ := img.Index.Digest()
		for _, t := range img.Tags {
			pt := pendingTag{image: i, tag: t, digest: digest, index: digest}
			if t == "latest" {
				latest = append(latest, pt)
			} else {
				first = append(first, pt)
			}
		}
		for _, t := range img.PlatformTags {
			platform = append(platform, pendingTag{image: i, tag: t.Tag, digest: t.Manifest, index: digest, platform: true})
		}
	}
	return append(append(first, platform...), latest...)
}

type pendingTag struct {
	image  int
	tag    string
	digest v1.Hash
	// index is the digest of the image's index (digest's too, but for a
	// platform tag).
	index    v1.Hash
	platform bool
}
