package registry

import (
	"context"

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
