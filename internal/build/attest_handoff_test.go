package build

import (
	"context"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
)

// handedOff records what OnImage was given, per platform.
type handedOff struct {
	mu sync.Mutex
	m  map[string][]v1.Hash
}

func (h *handedOff) onImage(_ context.Context, _ string, p v1.Platform, img v1.Image) error {
	d, err := img.Digest()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[platform.Format(p)] = append(h.m[platform.Format(p)], d)
	return nil
}

// Issue 28: the blobs of a platform's attestations go up with the
// platform's image, beside the compiles, not in the publish phase: OnImage
// takes the image and every artifact that carries its statements.
func TestOnImageTakesTheAttestationsToo(t *testing.T) {
	base := alpineLike(t, "linux/amd64", "linux/arm64")
	for _, mode := range []product.AttestMode{product.AttestIndex, product.AttestReferrers} {
		t.Run(string(mode), func(t *testing.T) {
			h := &handedOff{m: map[string][]v1.Hash{}}
			o := attestOptions(t, mode)
			o.OnImage = h.onImage
			res, err := Build(context.Background(), attestPlan(t, base), o)
			require.NoError(t, err)
			for _, p := range res.Images[0].Platforms {
				require.NotNil(t, p.Attestation)
				want := []v1.Hash{p.Digest}
				if mode == product.AttestIndex {
					want = append(want, p.Attestation.Digests.Manifest)
				} else {
					want = append(want, p.Attestation.Digests.Referrers...)
				}
				assert.ElementsMatch(t, want, h.m[platform.Format(p.Platform)], "%s: the image and its attestations, once each", platform.Format(p.Platform))
			}
		})
	}

	// Without attestations OnImage takes the platform images alone.
	h := &handedOff{m: map[string][]v1.Hash{}}
	o := options(t)
	o.OnImage = h.onImage
	res, err := Build(context.Background(), attestPlan(t, base), o)
	require.NoError(t, err)
	for _, p := range res.Images[0].Platforms {
		assert.Equal(t, []v1.Hash{p.Digest}, h.m[platform.Format(p.Platform)])
	}
}
