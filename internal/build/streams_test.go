package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// streamed records what OnLayer read and when OnImage ran.
type streamed struct {
	t      *testing.T
	mu     sync.Mutex
	layers map[string][]v1.Hash // platform -> sha256 of each stream read to its end
	errs   map[string][]error   // platform -> errors that ended a stream
	order  []string             // "layer linux/amd64", "image linux/amd64", ...
}

func (s *streamed) record(opts *Options) {
	s.layers, s.errs = map[string][]v1.Hash{}, map[string][]error{}
	opts.OnLayer = func(_ context.Context, _ string, p v1.Platform, l v1.Layer) error {
		rc, err := l.Compressed()
		require.NoError(s.t, err)
		defer rc.Close()
		h := sha256.New()
		_, err = io.Copy(h, rc)
		s.mu.Lock()
		defer s.mu.Unlock()
		key := platform.Format(p)
		if err != nil {
			s.errs[key] = append(s.errs[key], err)
			return err
		}
		s.layers[key] = append(s.layers[key], v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))})
		s.order = append(s.order, "layer "+key)
		return nil
	}
	opts.OnImage = func(_ context.Context, _ string, p v1.Platform, _ v1.Image) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.order = append(s.order, "image "+platform.Format(p))
		return nil
	}
}

// The platforms the release waits on have their new layers streamed to
// OnLayer while written: each stream is exactly a layer of the built image
// and ends before OnImage gets that platform.
func TestLastPlatformsStreamTheirLayers(t *testing.T) {
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64,linux/s390x")})
	require.NoError(t, err)
	opts := options(t)
	s := streamed{t: t}
	s.record(&opts)
	res, err := Build(context.Background(), plan, opts)
	require.NoError(t, err)
	require.NotEmpty(t, s.layers, "the last platform to compile streams its layer")
	assert.Empty(t, s.errs)
	for _, p := range res.Images[0].Platforms {
		key := platform.Format(p.Platform)
		img, err := res.Images[0].Index.Image(p.Digest)
		require.NoError(t, err)
		layers, err := img.Layers()
		require.NoError(t, err)
		var digests []v1.Hash
		for _, l := range layers {
			d, err := l.Digest()
			require.NoError(t, err)
			digests = append(digests, d)
		}
		for _, d := range s.layers[key] {
			assert.Contains(t, digests, d, "%s: a streamed blob is a layer of the image", key)
		}
		if len(s.layers[key]) > 0 {
			assert.Less(t, indexOf(s.order, "layer "+key), indexOf(s.order, "image "+key), "%s: stream before OnImage", key)
		}
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// A platform that fails its checks ends its streams with the failure:
// nothing it wrote reaches the end of an upload, and OnImage never runs.
//
// Both platforms fail. The first to be assembled once nothing compiles (it
// streams) goes on; the other waits, whichever it is, until that failure
// is reported (the run goes on to check every platform, see
// checkFindings), so neither the order in which the compiles end nor how
// fast each check runs decides what streams.
func TestFailedCheckEndsStreams(t *testing.T) {
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64")})
	require.NoError(t, err)
	plan.Images[0].Contract = "helper" // a lone binary on scratch is no helper image
	opts := options(t)
	s := streamed{t: t}
	s.record(&opts)
	// Should a platform pass after all, nobody waits any more: the test
	// fails on its assertions instead of hanging.
	passed := make(chan struct{})
	var pass sync.Once
	onImage := opts.OnImage
	opts.OnImage = func(ctx context.Context, image string, p v1.Platform, img v1.Image) error {
		pass.Do(func() { close(passed) })
		return onImage(ctx, image, p, img)
	}
	// The first failure is known once its unit's failed stage is reported.
	firstFailure := make(chan struct{})
	var failedOnce sync.Once
	opts.Progress = progressFunc(func(e progress.Event) {
		if e.Kind == progress.KindStage && e.Stage == progress.Failed {
			failedOnce.Do(func() { close(firstFailure) })
		}
	})
	var mu sync.Mutex
	leader, waited := false, 0
	opts.hooks = &hooks{assembling: func(ctx context.Context, _ v1.Platform, background bool) {
		mu.Lock()
		lead := !background && !leader
		leader = leader || lead
		if !lead {
			waited++
		}
		mu.Unlock()
		if !lead {
			select {
			case <-ctx.Done():
			case <-passed:
			case <-firstFailure:
			}
		}
	}}
	_, err = Build(context.Background(), plan, opts)
	assert.Equal(t, 1, waited, "one platform waited for the other's failure")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "image hello failed verification, nothing was published")
	assert.Empty(t, s.layers, "no stream may end as a whole blob")
	assert.NotEmpty(t, s.errs, "the last platform streamed its layer")
	for p, errs := range s.errs {
		for _, e := range errs {
			assert.Contains(t, e.Error(), "failed verification", p)
		}
	}
	assert.Empty(t, s.order)
}

// progressFunc is a progress observer that calls itself.
type progressFunc func(progress.Event)

func (f progressFunc) Event(e progress.Event) { f(e) }
