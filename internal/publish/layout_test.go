package publish

import (
	"archive/tar"
	"bufio"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readLayout opens the layout at dir and returns its index.json.
func readLayout(t *testing.T, dir string) (v1.ImageIndex, *v1.IndexManifest) {
	t.Helper()
	p, err := layout.FromPath(dir)
	require.NoError(t, err)
	top, err := p.ImageIndex()
	require.NoError(t, err)
	im, err := top.IndexManifest()
	require.NoError(t, err)
	return top, im
}

// umask reads the process's umask without changing it (Linux).
func umask(t *testing.T) fs.FileMode {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "Umask:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			require.NoError(t, err)
			return fs.FileMode(n)
		}
	}
	t.Skip("no Umask line in /proc/self/status")
	return 0
}

// TestLayoutFilesHaveOrdinaryModes: directories 0755, every file (blobs,
// index.json, oci-layout) 0644, before the umask; an archive 0644 too.
func TestLayoutFilesHaveOrdinaryModes(t *testing.T) {
	mask := umask(t)
	idx, digests := testIndex(t)
	images := []Image{{Name: "helper", Index: idx, Tags: []string{"v1"}, PlatformTags: []PlatformTag{{Manifest: digests[0], Tag: "x86_64-v1"}}}}
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, ToLayout(context.Background(), dir, images))
	files := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		want := fs.FileMode(0o644) &^ mask
		if d.IsDir() {
			want = fs.ModeDir | fs.FileMode(0o755)&^mask
		} else {
			files++
		}
		assert.Equal(t, want, info.Mode(), "mode of %s", path)
		return nil
	}))
	assert.Greater(t, files, 8, "index.json, oci-layout and the blobs")

	archive := filepath.Join(t.TempDir(), "img.tar")
	require.NoError(t, ToArchive(context.Background(), archive, t.TempDir(), time.Unix(0, 0), images))
	info, err := os.Stat(archive)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644)&^mask, info.Mode())
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		want := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			want = 0o755
		}
		assert.Equal(t, want, h.Mode, h.Name)
	}
}

// TestLayoutEntriesHaveNoArtifactType: index.json lists plain images and
// indexes with media type, digest, size and name only, like the index.
func TestLayoutEntriesHaveNoArtifactType(t *testing.T) {
	idx, digests := testIndex(t)
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, ToLayout(context.Background(), dir, []Image{{Name: "helper", Index: idx, Tags: []string{"v1"},
		PlatformTags: []PlatformTag{{Manifest: digests[0], Tag: "x86_64-v1"}, {Manifest: digests[1], Tag: "arm64-v1"}}}}))
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "artifactType")
	top, im := readLayout(t, dir)
	require.Len(t, im.Manifests, 3)
	for _, d := range im.Manifests {
		assert.Empty(t, d.ArtifactType)
		assert.Nil(t, d.Platform)
		assert.Len(t, d.Annotations, 1)
	}
	img, err := top.Image(digests[1])
	require.NoError(t, err)
	require.NoError(t, validate.Image(img))
	child, err := top.ImageIndex(im.Manifests[0].Digest)
	require.NoError(t, err)
	require.NoError(t, validate.Index(child))
}

// TestLayoutWrittenByOldVersions: an existing layout written by
// go-containerregistry (as helperbuild did, index.json executable) keeps its
// other entries and gets an ordinary index.json.
func TestLayoutWrittenByOldVersions(t *testing.T) {
	mask := umask(t)
	dir := filepath.Join(t.TempDir(), "oci")
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	old, _ := testIndex(t)
	require.NoError(t, p.AppendIndex(old))
	idx, _ := testIndex(t)
	require.NoError(t, ToLayout(context.Background(), dir, []Image{{Index: idx, Tags: []string{"v2"}}}))
	info, err := os.Stat(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644)&^mask, info.Mode())
	top, im := readLayout(t, dir)
	require.Len(t, im.Manifests, 2, "the old entry is kept")
	assert.Equal(t, "v2", im.Manifests[1].Annotations[specsv1.AnnotationRefName])
	require.NoError(t, validate.Index(top, validate.Fast))
}

// A failed write leaves index.json as it was: no entry points at a blob
// that is not there.
func TestLayoutFailureKeepsTheEntries(t *testing.T) {
	idx, _ := testIndex(t)
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, ToLayout(context.Background(), dir, []Image{{Index: idx, Tags: []string{"v1"}}}))
	before, err := os.ReadFile(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	next, _ := testIndex(t)
	require.ErrorIs(t, ToLayout(ctx, dir, []Image{{Index: next, Tags: []string{"v1"}}}), context.Canceled)
	after, err := os.ReadFile(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	left, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}
