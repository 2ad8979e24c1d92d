package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Reader reads what a registry holds about a manifest, with Options (the
// run's transport stack, keychain and insecure hosts): its referrers and
// the images they, or a tag, name. Errors are explained (Explain)
// and a 404 of an image is imageref.ErrNotFound; sign's verifier reads
// signatures through it.
type Reader struct{ Options imageref.Options }

// Referrers lists the referrers of ref: the registry's referrers API, else
// the sha256-<hex> fallback tag, as go-containerregistry reads them.
func (r Reader) Referrers(ctx context.Context, ref name.Digest) (*v1.IndexManifest, error) {
	idx, err := remote.Referrers(ref, RemoteOptions(ctx, r.Options)...)
	if err != nil {
		return nil, Explain(err)
	}
	return idx.IndexManifest()
}

// Image reads the image ref names; its layers are read from the registry
// when asked for, within ctx.
func (r Reader) Image(ctx context.Context, ref name.Reference) (v1.Image, error) {
	img, err := remote.Image(ref, RemoteOptions(ctx, r.Options)...)
	if err != nil {
		return nil, ExplainRead(err)
	}
	return img, nil
}

// Attached lists what ref's registry keeps about ref as referrers, for a
// copy: the referrers API, else the sha256-<hex> fallback tag. A registry
// that resolves that tag to ref itself (GitLab's takes sha256-<hex> as the
// digest) cannot hold a referrers index there, so nothing is attached
// there: the list is empty. The entries come sorted by digest, whatever
// order the registry answered in.
func (r Reader) Attached(ctx context.Context, ref name.Digest) ([]v1.Descriptor, error) {
	opts := RemoteOptions(ctx, r.Options)
	idx, err := remote.Referrers(ref, opts...)
	if err != nil {
		fallback := ref.Context().Tag(strings.Replace(ref.DigestStr(), ":", "-", 1))
		if d, herr := remote.Head(fallback, opts...); herr == nil && d.Digest.String() == ref.DigestStr() {
			return nil, nil
		}
		return nil, fmt.Errorf("referrers of %s: %w", ref, Explain(err))
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", ref, err)
	}
	out := slices.Clone(im.Manifests)
	slices.SortFunc(out, func(a, b v1.Descriptor) int { return strings.Compare(a.Digest.String(), b.Digest.String()) })
	return out, nil
}
