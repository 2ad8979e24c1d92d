package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Referrers lists the referrers of a manifest of repo (the referrers API,
// else the fallback tag, as go-containerregistry reads them), each read
// as an image.
func Referrers(repo name.Repository, o imageref.Options) func(ctx context.Context, d v1.Hash) ([]v1.Image, error) {
	return func(ctx context.Context, d v1.Hash) ([]v1.Image, error) {
		ropts := RemoteOptions(ctx, o)
		idx, err := remote.Referrers(repo.Digest(d.String()), ropts...)
		if err != nil {
			return nil, Explain(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		var out []v1.Image
		for _, m := range im.Manifests {
			img, err := remote.Image(repo.Digest(m.Digest.String()), ropts...)
			if err != nil {
				return nil, fmt.Errorf("referrer %s: %w", m.Digest, Explain(err))
			}
			out = append(out, img)
		}
		return out, nil
	}
}

// GetAll reads the manifests refs name, at most limit at once over one
// connection per repository (ping and token once, not once per manifest),
// and hands each to use (with its error) in the goroutine that read it, so
// what use reads next (a config) is read concurrently too. It returns the
// context's error, else the first of use's errors in the order of refs.
func GetAll(ctx context.Context, o imageref.Options, refs []name.Digest, limit int, use func(i int, d *remote.Descriptor, err error) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	opts := RemoteOptions(gctx, o)
	puller, err := remote.NewPuller(opts...)
	if err != nil {
		return err
	}
	opts = append(opts, remote.Reuse(puller))
	errs := make([]error, len(refs))
	for i, ref := range refs {
		g.Go(func() error {
			d, err := remote.Get(ref, opts...)
			errs[i] = use(i, d, err)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstOf(errs)
}

// firstOf is the first non-nil error of errs, or nil.
func firstOf(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
