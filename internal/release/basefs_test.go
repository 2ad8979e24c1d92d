package release

import (
	"archive/tar"
	"bytes"
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
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// mergedUsr is a merged-/usr base (Debian, Ubuntu) plus the directories
// whose metadata a layer must not reset.
var mergedUsr = []*tar.Header{
	{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "usr/bin/ls", Typeflag: tar.TypeReg, Mode: 0o755, Size: 2},
	{Name: "usr/sbin/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin", Mode: 0o777},
	{Name: "sbin", Typeflag: tar.TypeSymlink, Linkname: "/usr/sbin", Mode: 0o777},
	{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
	{Name: "home/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "home/gitlab-runner/", Typeflag: tar.TypeDir, Mode: 0o700, Uid: 100, Gid: 65533},
	{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2},
	{Name: "etc/up", Typeflag: tar.TypeSymlink, Linkname: "../../../../opt", Mode: 0o777},
	{Name: "opt/", Typeflag: tar.TypeDir, Mode: 0o750, Uid: 7, Gid: 8},
	{Name: "loop", Typeflag: tar.TypeSymlink, Linkname: "loop", Mode: 0o777},
	{Name: "root", Typeflag: tar.TypeSymlink, Linkname: "/", Mode: 0o777},
}

// baseTar writes headers into an uncompressed tar; regular files hold "xx".
func baseTar(t testing.TB, hdrs []*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		h := *h
		h.Format = tar.FormatPAX
		require.NoError(t, tw.WriteHeader(&h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func baseFSOf(t testing.TB, hdrs []*tar.Header) *rootfs.FS {
	t.Helper()
	f, err := rootfs.Flatten(context.Background(), []v1.Layer{static.NewLayer(baseTar(t, hdrs), types.OCIUncompressedLayer)})
	require.NoError(t, err)
	return f
}

func fileAt(p string) rootfs.Entry {
	return rootfs.Entry{Path: p, Kind: rootfs.File, Source: "/src", Mode: 0o644}
}
func dirAt(p string, mode fs.FileMode, uid, gid int) rootfs.Entry {
	return rootfs.Entry{Path: p, Kind: rootfs.Dir, Mode: mode, UID: uid, GID: gid}
}

func TestOnBase(t *testing.T) {
	base := baseFSOf(t, mergedUsr)
	usr, usrBin := dirAt("/usr", 0o755, 0, 0), dirAt("/usr/bin", 0o755, 0, 0)
	tests := []struct {
		name string
		in   []rootfs.Entry
		want []rootfs.Entry
		err  string
	}{
		{name: "relative symlink on the way", in: []rootfs.Entry{fileAt("/bin/foo")},
			want: []rootfs.Entry{fileAt("/usr/bin/foo"), usrBin, usr}},
		{name: "absolute symlink on the way", in: []rootfs.Entry{fileAt("/sbin/x")},
			want: []rootfs.Entry{fileAt("/usr/sbin/x"), dirAt("/usr/sbin", 0o755, 0, 0), usr}},
		{name: "a link out of the root stops at the root", in: []rootfs.Entry{fileAt("/etc/up/x")},
			want: []rootfs.Entry{fileAt("/opt/x"), dirAt("/opt", 0o750, 7, 8)}},
		{name: "parents keep the base's mode and owner, missing ones are left to layer.Write",
			in:   []rootfs.Entry{fileAt("/tmp/x"), fileAt("/home/gitlab-runner/.config/y")},
			want: []rootfs.Entry{fileAt("/tmp/x"), fileAt("/home/gitlab-runner/.config/y"), dirAt("/tmp", fs.ModeSticky|0o777, 0, 0), dirAt("/home/gitlab-runner", 0o700, 100, 65533), dirAt("/home", 0o755, 0, 0)}},
		{name: "missing directories below a symlink", in: []rootfs.Entry{fileAt("/bin/new/deeper/x")},
			want: []rootfs.Entry{fileAt("/usr/bin/new/deeper/x"), usrBin, usr}},
		{name: "a final symlink is not followed for a file", in: []rootfs.Entry{fileAt("/bin")},
			want: []rootfs.Entry{fileAt("/bin")}},
		{name: "a directory entry at a link to a directory moves to it, explicit entries keep their metadata",
			in:   []rootfs.Entry{dirAt("/bin", 0o700, 1, 1), dirAt("/root", 0o700, 0, 0), dirAt("/new", 0o750, 2, 2)},
			want: []rootfs.Entry{dirAt("/usr/bin", 0o700, 1, 1), dirAt("/new", 0o750, 2, 2), usr}},
		{name: "two paths onto one: the later wins, directories keep the first",
			in:   []rootfs.Entry{fileAt("/bin/a"), {Path: "/usr/bin/a", Kind: rootfs.Symlink, Linkname: "b"}, dirAt("/bin/d", 0o700, 0, 0), dirAt("/usr/bin/d", 0o755, 0, 0)},
			want: []rootfs.Entry{{Path: "/usr/bin/a", Kind: rootfs.Symlink, Linkname: "b"}, dirAt("/usr/bin/d", 0o700, 0, 0), usrBin, usr}},
		{name: "paths layer.Write refuses pass unchanged", in: []rootfs.Entry{fileAt("bin/x"), fileAt("/bin/../x"), fileAt("/")},
			want: []rootfs.Entry{fileAt("bin/x"), fileAt("/bin/../x"), fileAt("/")}},
		{name: "through a file", in: []rootfs.Entry{fileAt("/etc/passwd/x")}, err: "/etc/passwd/x on the base image: not a directory"},
		{name: "through a loop", in: []rootfs.Entry{fileAt("/loop/x")}, err: "/loop/x on the base image: too many levels of symbolic links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := onBase(base, tt.in)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHasDir(t *testing.T) {
	has := hasDir(baseFSOf(t, mergedUsr))
	for p, want := range map[string]bool{
		"/bin": true, "/usr/bin": true, "/sbin": true, "/tmp": true, "/root": true, "/etc/up": true,
		"/usr/bin/ls": false, "/nope": false, "/loop": false, "/bin/ls": false,
	} {
		assert.Equal(t, want, has(p), p)
	}
}

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
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(baseTar(t, mergedUsr), types.OCIUncompressedLayer))
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
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(baseTar(t, mergedUsr), types.OCIUncompressedLayer))
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
