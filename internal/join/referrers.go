package join

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// referrers reads what c's registry keeps about its platform manifest as
// OCI 1.1 referrers (attestations, SBOM documents, signatures and bundles
// over that digest), each as an image to copy as it is, whose blobs are
// read within keep (ctx ends with the checks, the copy comes later). A
// layout or archive source keeps none. A referrer that is itself an index
// is left behind, with a warning: nothing helperbuild or cosign writes is
// one.
func referrers(ctx, keep context.Context, c candidate, opts imageref.Options, log *slog.Logger) ([]Attached, error) {
	if c.repo == nil {
		return nil, nil
	}
	list, err := registry.Reader{Options: opts}.Attached(ctx, c.repo.Digest(c.digest.String()))
	if err != nil {
		return nil, err
	}
	r := registry.Reader{Options: opts}
	var out []Attached
	for _, d := range list {
		if !d.MediaType.IsImage() {
			log.Warn("referrer left behind: not an image manifest", "subject", c.digest.String(), "referrer", d.Digest.String(), "mediaType", string(d.MediaType))
			continue
		}
		img, err := r.Image(keep, c.repo.Digest(d.Digest.String()))
		if err != nil {
			return nil, fmt.Errorf("referrer %s of %s: %w", d.Digest, c.digest, err)
		}
		desc, err := referrerEntry(d, img)
		if err != nil {
			return nil, fmt.Errorf("referrer %s of %s: %w", d.Digest, c.digest, err)
		}
		out = append(out, Attached{Descriptor: desc, Manifest: img})
	}
	return out, nil
}

// referrerEntry is d as a referrers index lists it (the distribution
// spec's rule): the manifest's artifactType, else its config's media type,
// and the manifest's annotations, whatever the source's registry put there.
func referrerEntry(d v1.Descriptor, img v1.Image) (v1.Descriptor, error) {
	m, err := img.Manifest()
	if err != nil {
		return d, err
	}
	d.ArtifactType = m.ArtifactType
	if d.ArtifactType == "" {
		d.ArtifactType = string(m.Config.MediaType)
	}
	d.Annotations = m.Annotations
	return d, nil
}

// Tagged is a cosign tag a source's repository holds about a platform
// manifest: sha256-<hex>.sig (signatures) or .att (attestations), the
// form cosign wrote before OCI 1.1 referrers.
type Tagged struct {
	Tag   string
	Image v1.Image
}

// cosignSuffixes are the tags cosign writes beside a manifest.
var cosignSuffixes = []string{".sig", ".att"}

// cosignTags reads c's cosign tags; an absent one is none. Their layers
// are read within keep.
func cosignTags(keep context.Context, c candidate, opts imageref.Options) ([]Tagged, error) {
	if c.repo == nil {
		return nil, nil
	}
	r := registry.Reader{Options: opts}
	var out []Tagged
	for _, suffix := range cosignSuffixes {
		tag := c.digest.Algorithm + "-" + c.digest.Hex + suffix
		img, err := r.Image(keep, c.repo.Tag(tag))
		switch {
		case errors.Is(err, imageref.ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("cosign tag %s: %w", tag, err)
		}
		out = append(out, Tagged{Tag: tag, Image: img})
	}
	return out, nil
}
