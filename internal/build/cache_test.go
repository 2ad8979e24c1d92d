package build

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// An unchanged second run takes its layers and its verification from the
// cache and gives the same digest.
func TestSecondRunUsesTheCache(t *testing.T) {
	dir := module(t)
	cacheDir := t.TempDir()
	run := func() (string, string) {
		plan, err := recipe.PackagePlan(recipe.Package{Dir: dir, Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64")})
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
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		assert.Contains(t, logs1, `msg="platform verified" image=hello platform=`+p+" cached=false")
	}
	d2, logs2 := run()
	assert.Equal(t, d1, d2)
	assert.NotContains(t, logs2, "cached=false", "no layer is written or verified again")
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		assert.Contains(t, logs2, `msg="platform verified" image=hello platform=`+p+" cached=true")
	}
	assert.Contains(t, logs2, `msg=verified image=hello platforms=linux/amd64,linux/arm64 contract=""`)
}

// OnImage sees every platform's image once, before Build returns, and its
// error fails the build.
func TestOnImage(t *testing.T) {
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64,linux/s390x")})
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

// Platforms that fail their checks fail the build before any of their
// blobs is handed to OnImage (push's early upload); every platform is
// checked, and the report names both.
func TestFailedCheckUploadsNothing(t *testing.T) {
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64")})
	require.NoError(t, err)
	plan.Images[0].Contract = "helper" // a lone binary on scratch is no helper image
	opts := options(t)
	var mu sync.Mutex
	var handed []string
	opts.OnImage = func(_ context.Context, _ string, p v1.Platform, _ v1.Image) error {
		mu.Lock()
		defer mu.Unlock()
		handed = append(handed, platform.Format(p))
		return nil
	}
	events := &recorded{}
	opts.Progress = events
	_, err = Build(context.Background(), plan, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "image hello failed verification, nothing was published")
	// The progress shows the failed platform, and no platform done or uploading.
	var failedStage bool
	for _, e := range events.all() {
		if e.Kind == progress.KindStage {
			assert.NotContains(t, []progress.Stage{progress.Uploading, progress.Done}, e.Stage, e)
			failedStage = failedStage || e.Stage == progress.Failed && strings.Contains(e.Message, "failed verification")
		}
	}
	assert.True(t, failedStage, "a failed stage says why: %v", events.all())
	var failed *verify.FailedError
	require.ErrorAs(t, err, &failed, "the report travels with the error")
	assert.Contains(t, verify.FindingLines(failed.Report), "linux/amd64,linux/arm64 contract: FAIL: /bin/bash missing: gitlab-runner-build runs every stage with /bin/bash")
	assert.Empty(t, handed)
}

// The compression level changes the blobs, never what is in them, and a
// layer cached at one level is not served for another.
func TestCompressionLevel(t *testing.T) {
	dir, cacheDir := module(t), t.TempDir()
	build := func(level int) (v1.Hash, []v1.Hash, int64) {
		plan, err := recipe.PackagePlan(recipe.Package{Dir: dir, Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64")})
		require.NoError(t, err)
		opts := options(t)
		opts.CacheDir, opts.CompressionLevel = cacheDir, level
		res, err := Build(context.Background(), plan, opts)
		require.NoError(t, err)
		img, err := res.Images[0].Index.Image(res.Images[0].Platforms[0].Digest)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		layers, err := img.Layers()
		require.NoError(t, err)
		size, err := layers[len(layers)-1].Size()
		require.NoError(t, err)
		return res.Images[0].Digest, cf.RootFS.DiffIDs, size
	}
	fastDigest, fastDiffs, fastSize := build(0)
	smallDigest, smallDiffs, smallSize := build(9)
	assert.NotEqual(t, fastDigest, smallDigest)
	assert.Equal(t, fastDiffs, smallDiffs)
	assert.Less(t, smallSize, fastSize)
	again, _, _ := build(1) // level 1 is the default: the same layer, from the cache
	assert.Equal(t, fastDigest, again)
}

// recorded is a progress.Sink that keeps every event.
type recorded struct {
	mu     sync.Mutex
	events []progress.Event
}

func (r *recorded) Event(e progress.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorded) all() []progress.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
