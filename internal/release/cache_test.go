package release

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
