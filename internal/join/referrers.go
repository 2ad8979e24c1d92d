package join

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// referrers reads what c's registry keeps about its platform manifest as
// OCI 1.1 referrers (attestations, SBOM documents, signatures and bundles
// over that digest), each as an image to copy as it is. A layout or
// archive source keeps none. A referrer that is itself an index is left
// behind, with a warning: nothing helperbuild or cosign writes is one.
func referrers(ctx context.Context, c candidate, opts imageref.Options, log *slog.Logger) ([]Attached, error) {
	if c.repo == nil {
		return nil, nil
	}
	r := registry.Reader{Options: opts}
	list, err := r.Attached(ctx, c.repo.Digest(c.digest.String()))
	if err != nil {
		return nil, err
	}
	var out []Attached
	for _, d := range list {
		if !d.MediaType.IsImage() {
			log.Warn("referrer left behind: not an image manifest", "subject", c.digest.String(), "referrer", d.Digest.String(), "mediaType", string(d.MediaType))
			continue
		}
		img, err := r.Image(ctx, c.repo.Digest(d.Digest.String()))
		if err != nil {
			return nil, fmt.Errorf("referrer %s of %s: %w", d.Digest, c.digest, err)
		}
		out = append(out, Attached{Descriptor: d, Manifest: img})
	}
	return out, nil
}
