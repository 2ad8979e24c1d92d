package build

import (
	"archive/tar"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// countingImage counts Layers calls.
type countingImage struct {
	v1.Image
	calls *atomic.Int32
}

func (c countingImage) Layers() ([]v1.Layer, error) {
	c.calls.Add(1)
	return c.Image.Layers()
}

func TestFlatBasesOncePerDigest(t *testing.T) {
	img, err := mutate.AppendLayers(empty.Image, tartest.Layer(t, tartest.MergedUsr()...))
	require.NoError(t, err)
	dig, err := img.Digest()
	require.NoError(t, err)
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	var calls atomic.Int32
	counted := countingImage{Image: img, calls: &calls}

	var b flatBases
	got := make([]*rootfs.FS, 8)
	var g errgroup.Group
	g.SetLimit(4)
	for i := range got {
		g.Go(func() error {
			d := dig
			if i%2 == 1 {
				d = other
			}
			f, err := b.get(context.Background(), d, counted)
			got[i] = f
			return err
		})
	}
	require.NoError(t, g.Wait())
	assert.Equal(t, int32(2), calls.Load(), "one flatten per digest")
	for i := range got {
		assert.Same(t, got[i%2], got[i])
	}
	_, ok := got[0].Lookup("/home/gitlab-runner")
	assert.True(t, ok)
}

// TestBuildOnMergedUsrBase builds on a base where /bin is a symlink and
// checks the image a runtime would see: the symlink, and the base's
// directory metadata, survive the COPYs.
func TestBuildOnMergedUsrBase(t *testing.T) {
	host, _ := busyboxLike(t)
	img, err := mutate.AppendLayers(empty.Image, tartest.Layer(t, tartest.MergedUsr()...))
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	baseRef := host + "/base/merged-usr:1"
	r, err := name.ParseReference(baseRef)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img))

	dir := t.TempDir()
	for _, f := range []string{"foo", "x", "y"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644))
	}
	amd64 := platforms(t, "linux/amd64")[0]
	plan := &recipe.Plan{Dir: dir, Platforms: []recipe.Platform{{Platform: amd64}}, Images: []recipe.Image{{
		Name:           "merged",
		DockerfileName: "test Dockerfile",
		DockerfileData: []byte("ARG BASE\nFROM $BASE\nCOPY foo /bin/foo\nCOPY x /tmp/x\nCOPY y /home/gitlab-runner/.config/y\nWORKDIR /sbin\n"),
		Args:           map[string]string{"BASE": baseRef},
		Platforms:      []recipe.ImagePlatform{{Platform: amd64}},
	}}}
	res, err := Build(context.Background(), plan, options(t))
	require.NoError(t, err)
	child, err := res.Images[0].Index.Image(res.Images[0].Platforms[0].Digest)
	require.NoError(t, err)
	layers, err := child.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 5, "base + 3 COPY + WORKDIR")
	got, err := rootfs.Flatten(context.Background(), layers)
	require.NoError(t, err)

	bin, ok := got.Lookup("/bin")
	require.True(t, ok)
	assert.Equal(t, byte(tar.TypeSymlink), bin.Type, "/bin is still the base's symlink")
	assert.Equal(t, "usr/bin", bin.Linkname)
	for _, p := range []string{"/usr/bin/foo", "/usr/bin/ls", "/tmp/x", "/home/gitlab-runner/.config/y"} {
		info, ok := got.Lookup(p)
		if assert.True(t, ok, p) {
			assert.True(t, info.IsRegular(), p)
		}
	}
	_, info, err := got.Resolve("/bin/ls", true)
	require.NoError(t, err, "the base's programs are still reachable through /bin")
	assert.True(t, info.IsRegular())

	for _, d := range []struct {
		path     string
		mode     fs.FileMode
		uid, gid int
	}{
		{"/tmp", fs.ModeDir | fs.ModeSticky | 0o777, 0, 0},
		{"/home/gitlab-runner", fs.ModeDir | 0o700, 100, 65533},
		{"/home/gitlab-runner/.config", fs.ModeDir | 0o755, 0, 0},
		{"/usr/bin", fs.ModeDir | 0o755, 0, 0},
	} {
		info, ok := got.Lookup(d.path)
		if assert.True(t, ok, d.path) {
			assert.Equal(t, d.mode, info.Mode, d.path)
			assert.Equal(t, [2]int{d.uid, d.gid}, [2]int{info.UID, info.GID}, d.path)
		}
	}

	// The COPY to /bin/foo alone holds no bin/ directory, and the WORKDIR of
	// a directory the base has through a symlink is an empty layer.
	own, err := rootfs.Flatten(context.Background(), layers[1:2])
	require.NoError(t, err)
	_, ok = own.Lookup("/bin")
	assert.False(t, ok)
	workdir, err := rootfs.Flatten(context.Background(), layers[4:5])
	require.NoError(t, err)
	_, ok = workdir.Lookup("/sbin")
	assert.False(t, ok)
}

// prefetch reads each distinct base once, in unit order, skips scratch
// units, and stops when ctx ends or stop is closed.
func TestFlatBasesPrefetch(t *testing.T) {
	img, err := mutate.AppendLayers(empty.Image, tartest.Layer(t, tartest.MergedUsr()...))
	require.NoError(t, err)
	dig, err := img.Digest()
	require.NoError(t, err)
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("1", 64)}
	var calls atomic.Int32
	counted := countingImage{Image: img, calls: &calls}
	units := [][]unit{
		{{base: counted, baseDig: dig}, {base: counted, baseDig: other}, {}},
		{{base: counted, baseDig: dig}},
	}

	var b flatBases
	b.prefetch(context.Background(), units, nil)
	assert.Equal(t, int32(2), calls.Load(), "each distinct base once")
	f, err := b.get(context.Background(), other, counted)
	require.NoError(t, err)
	_, ok := f.Lookup("/home/gitlab-runner")
	assert.True(t, ok)
	assert.Equal(t, int32(2), calls.Load(), "get finds what prefetch read")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stopped flatBases
	stopped.prefetch(ctx, units, nil)
	assert.Empty(t, stopped.m, "nothing read once ctx ended")
	closed := make(chan struct{})
	close(closed)
	stopped.prefetch(context.Background(), units, closed)
	assert.Empty(t, stopped.m, "nothing read once stopped")
}
