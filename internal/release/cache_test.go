package release

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// An unchanged second run takes its layers and its verification from the
// cache and gives the same digest.
func TestSecondRunUsesTheCache(t *testing.T) {
	dir := module(t)
	cacheDir := t.TempDir()
	run := func() (string, string) {
		plan, err := PackagePlan(Package{Dir: dir, Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64")})
		require.NoError(t, err)
		var logs bytes.Buffer
		opts := options(t)
		opts.CacheDir = cacheDir
		opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		res, err := Build(context.Background(), plan, opts)
		require.NoError(t, err)
		return res.Images[0].Digest.String(), logs.String()
	}
	d1, logs1 := run()
	assert.Contains(t, logs1, "cached=false")
	assert.NotContains(t, logs1, "msg=verified image=hello platforms=linux/amd64,linux/arm64 contract=\"\" cached=true")
	d2, logs2 := run()
	assert.Equal(t, d1, d2)
	assert.NotContains(t, logs2, "cached=false", "no layer is written again")
	assert.Contains(t, logs2, "msg=verified image=hello platforms=linux/amd64,linux/arm64 contract=\"\" cached=true")
}

// OnImage sees every platform's image once, before Build returns, and its
// error fails the build.
func TestOnImage(t *testing.T) {
	plan, err := PackagePlan(Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64,linux/s390x")})
	require.NoError(t, err)
	opts := options(t)
	var mu sync.Mutex
	seen := map[string]v1.Hash{}
	opts.OnImage = func(_ context.Context, image string, p v1.Platform, img v1.Image) error {
		d, err := img.Digest()
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		seen[image+" "+platform.Format(p)] = d
		return nil
	}
	res, err := Build(context.Background(), plan, opts)
	require.NoError(t, err)
	require.Len(t, seen, 3)
	for _, p := range res.Images[0].Platforms {
		assert.Equal(t, p.Digest, seen["hello "+platform.Format(p.Platform)])
	}

	opts = options(t)
	opts.OnImage = func(context.Context, string, v1.Platform, v1.Image) error { return errors.New("registry gone") }
	_, err = Build(context.Background(), plan, opts)
	assert.ErrorContains(t, err, "registry gone")
}
