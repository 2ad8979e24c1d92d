package registry

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

// seen is what a read of every platform of a shows: per platform, the
// manifest digest, the raw manifest and config, and each layer's digest,
// size, media type, diff ID, its bytes' hashes, and where it mounts from.
func seen(t *testing.T, a *imageref.Artifact) []string {
	t.Helper()
	ps, err := a.Platforms()
	require.NoError(t, err)
	var out []string
	for _, p := range ps {
		img, d, err := a.ImageFor(p)
		require.NoError(t, err)
		raw, err := img.RawManifest()
		require.NoError(t, err)
		cfg, err := img.RawConfigFile()
		require.NoError(t, err)
		out = append(out, d.String(), string(raw), string(cfg))
		layers, err := img.Layers()
		require.NoError(t, err)
		for _, l := range layers {
			ld, _ := l.Digest()
			size, _ := l.Size()
			mt, _ := l.MediaType()
			diffID, err := l.DiffID()
			require.NoError(t, err)
			ml, ok := l.(*remote.MountableLayer)
			require.True(t, ok, "a base layer stays mountable")
			out = append(out, ld.String(), string(mt), diffID.String(), ml.Reference.String(), hashOf(t, l.Compressed), hashOf(t, l.Uncompressed))
			assert.Equal(t, ld.String(), hashOf(t, l.Compressed))
			assert.Equal(t, diffID.String(), hashOf(t, l.Uncompressed))
			assert.Positive(t, size)
		}
	}
	return out
}

func hashOf(t *testing.T, open func() (io.ReadCloser, error)) string {
	t.Helper()
	rc, err := open()
	require.NoError(t, err)
	defer rc.Close()
	h, _, err := v1.SHA256(rc)
	require.NoError(t, err)
	return h.String()
}

// With a blob store kept between runs, a base index is read as from the
// registry (same manifests, configs, layers, diff IDs, mount sources), and
// a later run asks the registry only for the index: manifests, configs
// and layers come from the store. A damaged file in the store is fetched
// again; Prune forgets what no run used for a while.
func TestReadKeptBase(t *testing.T) {
	var reqs testkit.RequestLog
	host := testkit.Registry(t, reqs.Wrap)
	ctx := context.Background()
	idx := testkit.Index(t, 1024, 2, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	ref := mustParse(t, host+"/base/busybox:1")
	require.NoError(t, remote.WriteIndex(ref.Name, idx))
	plain, err := Read(ctx, ref, imageref.Options{Blobs: imageref.NewBlobs(t.TempDir())})
	require.NoError(t, err)
	want := seen(t, plain)

	dir := filepath.Join(t.TempDir(), "bases")
	reqs.Take()
	first, err := Read(ctx, ref, imageref.Options{Blobs: imageref.KeepBlobs(dir)})
	require.NoError(t, err)
	assert.Equal(t, want, seen(t, first), "read through the store as from the registry")
	reqs.Take()

	later, err := Read(ctx, ref, imageref.Options{Blobs: imageref.KeepBlobs(dir)})
	require.NoError(t, err)
	assert.Equal(t, want, seen(t, later))
	var asked []string
	for _, r := range reqs.Take() {
		if r != "GET /v2/" {
			asked = append(asked, r)
		}
	}
	assert.Equal(t, []string{"GET /v2/base/busybox/manifests/1"}, asked, "a later run asks only for the tag")

	// A damaged config is fetched again, and repaired.
	img, _, err := first.ImageFor(v1.Platform{OS: "linux", Architecture: "amd64"})
	require.NoError(t, err)
	cfg, err := img.ConfigName()
	require.NoError(t, err)
	cfgFile := filepath.Join(dir, "sha256-"+cfg.Hex)
	require.NoError(t, os.WriteFile(cfgFile, []byte("{}"), 0o644))
	again, err := Read(ctx, ref, imageref.Options{Blobs: imageref.KeepBlobs(dir)})
	require.NoError(t, err)
	assert.Equal(t, want, seen(t, again))
	assert.Equal(t, 1, countPrefix(reqs.Take(), "GET /v2/base/busybox/blobs/"+cfg.String()), "the damaged config fetched again")
	assert.Equal(t, cfg.String(), hashOf(t, func() (io.ReadCloser, error) { return os.Open(cfgFile) }), "and kept whole")

	// Prune: what no run used for the age goes; the rest stays.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(cfgFile, old, old))
	freed, err := imageref.KeepBlobs(dir).Prune(24 * time.Hour)
	require.NoError(t, err)
	assert.Positive(t, freed)
	assert.NoFileExists(t, cfgFile)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, left, len(entries)-1)
	freed, err = imageref.NewBlobs(dir).Prune(0)
	require.NoError(t, err)
	assert.Zero(t, freed, "a store of one run prunes nothing")
}
