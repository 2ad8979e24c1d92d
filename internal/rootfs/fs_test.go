package rootfs

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

func TestAdd(t *testing.T) {
	body := []byte("x")
	tests := []struct {
		name   string
		layers [][]tartest.Entry
		want   string
		issues []string
	}{
		{
			name:   "implicit parents and names with ./ and /",
			layers: [][]tartest.Entry{{tartest.File("./usr/bin/a", 0o755, body), tartest.File("/etc/b", 0o644, body), tartest.Dir("./", 0o755)}},
			want:   "/etc/\n/etc/b\n/usr/\n/usr/bin/\n/usr/bin/a\n",
		},
		{
			name:   "pax global headers (git archive) are not files",
			layers: [][]tartest.Entry{{{Name: "pax_global_header", Type: tar.TypeXGlobalHeader}, tartest.File("a", 0o644, body)}},
			want:   "/a\n",
		},
		{
			name: "whiteout deletes a lower file and a lower directory tree",
			layers: [][]tartest.Entry{
				{tartest.File("bin/bash", 0o755, body), tartest.File("bin/sh", 0o755, body), tartest.File("opt/x/y/z", 0o644, body)},
				{tartest.File("bin/.wh.bash", 0, nil), tartest.File(".wh.opt", 0, nil)},
			},
			want: "/bin/\n/bin/sh\n",
		},
		{
			name: "whiteout does not delete what its own layer adds",
			layers: [][]tartest.Entry{
				{tartest.File("a", 0o644, body)},
				{tartest.File("b", 0o644, body), tartest.File(".wh.b", 0, nil)},
			},
			want: "/a\n/b\n",
		},
		{
			name: "opaque directory hides lower contents, keeps its own layer's",
			layers: [][]tartest.Entry{
				{tartest.File("etc/old", 0o644, body), tartest.File("etc/sub/old", 0o644, body), tartest.File("keep", 0o644, body)},
				{tartest.File("etc/new", 0o644, body), tartest.File("etc/sub/new", 0o644, body), tartest.File("etc/.wh..wh..opq", 0, nil)},
			},
			want: "/etc/\n/etc/new\n/etc/sub/\n/etc/sub/new\n/keep\n",
		},
		{
			name: "a file replaces a directory and its contents",
			layers: [][]tartest.Entry{
				{tartest.File("x/y", 0o644, body)},
				{tartest.File("x", 0o644, body)},
			},
			want: "/x\n",
		},
		{
			name: "a directory replaces a symlink on the way (overlayfs)",
			layers: [][]tartest.Entry{
				{tartest.File("usr/lib/z", 0o644, body), tartest.Symlink("lib", "usr/lib")},
				{tartest.File("lib/y", 0o644, body)},
			},
			want: "/lib/\n/lib/y\n/usr/\n/usr/lib/\n/usr/lib/z\n",
		},
		{
			name:   "a directory over a directory merges",
			layers: [][]tartest.Entry{{tartest.File("d/a", 0o644, body)}, {tartest.Dir("d", 0o700), tartest.File("d/b", 0o644, body)}},
			want:   "/d/\n/d/a\n/d/b\n",
		},
		{
			name:   "hardlinks to missing or non-regular targets are issues",
			layers: [][]tartest.Entry{{tartest.Dir("d", 0o755), tartest.Hardlink("l1", "nope"), tartest.Hardlink("l2", "d")}},
			want:   "/d/\n",
			issues: []string{
				"/l1 is a hardlink to /nope, which is not a regular file in the layers below it",
				"/l2 is a hardlink to /d, which is not a regular file in the layers below it",
			},
		},
		{
			name:   "dot-dot cannot leave the root",
			layers: [][]tartest.Entry{{tartest.File("../../etc/passwd", 0o644, body), tartest.File("a/../../b", 0o644, body)}},
			want:   "/b\n/etc/\n/etc/passwd\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := build(t, tt.layers...)
			assert.Equal(t, tt.want, listing(f))
			assert.Equal(t, tt.issues, f.Issues())
		})
	}
}

func TestMetadata(t *testing.T) {
	f := build(t, []tartest.Entry{
		{Name: "tmp", Type: tar.TypeDir, Mode: 0o1777},
		{Name: "home/gitlab-runner", Type: tar.TypeDir, Mode: 0o700, UID: 100, GID: 65533},
		{Name: "usr/bin/su", Type: tar.TypeReg, Mode: 0o4755, Body: []byte("su")},
		{Name: "old", Type: tar.TypeRegA, Mode: 0o644}, //nolint:staticcheck // old archives
		tartest.Symlink("bin", "usr/bin"),
	})
	tests := []struct {
		path string
		want Info
	}{
		{"/tmp", Info{Type: tar.TypeDir, Mode: fs.ModeDir | fs.ModeSticky | 0o777, Source: Source{0, 0}}},
		{"/home/gitlab-runner", Info{Type: tar.TypeDir, Mode: fs.ModeDir | 0o700, UID: 100, GID: 65533, Source: Source{0, 1}}},
		{"/home", Info{Type: tar.TypeDir, Mode: fs.ModeDir | 0o755}},
		{"/usr/bin/su", Info{Type: tar.TypeReg, Mode: fs.ModeSetuid | 0o755, Size: 2, Source: Source{0, 2}}},
		{"/old", Info{Type: tar.TypeReg, Mode: 0o644, Source: Source{0, 3}}},
		{"/bin", Info{Type: tar.TypeSymlink, Mode: fs.ModeSymlink | 0o777, Linkname: "usr/bin", Source: Source{0, 4}}},
		{"/", Info{Type: tar.TypeDir, Mode: fs.ModeDir | 0o755}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := f.Lookup(tt.path)
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	_, ok := f.Lookup("/bin/su")
	assert.False(t, ok, "Lookup follows no symlink")
	_, ok = f.Lookup("/usr/bin/su/x")
	assert.False(t, ok)
}

func TestHardlinkSharesSource(t *testing.T) {
	f := build(t,
		[]tartest.Entry{tartest.File("bin/busybox", 0o755, []byte("elf"))},
		[]tartest.Entry{tartest.Hardlink("usr/bin/git", "bin/busybox")},
	)
	bb, ok := f.Lookup("/bin/busybox")
	require.True(t, ok)
	git, ok := f.Lookup("/usr/bin/git")
	require.True(t, ok)
	assert.Equal(t, Source{0, 0}, git.Source, "contents stay where the target's are")
	assert.Equal(t, bb.Mode, git.Mode)
	assert.Equal(t, 1, f.lookup("/usr/bin/git").layer)
}

func TestFlattenAndReadSources(t *testing.T) {
	ctx := context.Background()
	layers := []v1.Layer{
		tartest.Layer(t, tartest.File("etc/os-release", 0o644, []byte("ID=test\n")), tartest.File("bin/sh", 0o755, []byte("sh")), tartest.File("gone", 0o644, []byte("g"))),
		tartest.Layer(t, tartest.File(".wh.gone", 0, nil), tartest.Hardlink("bin/ash", "bin/sh"), tartest.File("etc/motd", 0o644, []byte("hi"))),
	}
	f, err := Flatten(ctx, layers)
	require.NoError(t, err)
	assert.Equal(t, "/bin/\n/bin/ash\n/bin/sh\n/etc/\n/etc/motd\n/etc/os-release\n", listing(f))

	ash, _ := f.Lookup("/bin/ash")
	motd, _ := f.Lookup("/etc/motd")
	got := map[Source]string{}
	err = ReadSources(ctx, layers, map[Source]bool{ash.Source: true, motd.Source: true}, func(src Source, r io.Reader) error {
		b, err := io.ReadAll(r)
		got[src] = string(b)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, map[Source]string{{0, 1}: "sh", {1, 2}: "hi"}, got)

	assert.ErrorContains(t, ReadSources(ctx, layers, map[Source]bool{{5, 0}: true}, nil), "the image has 2 layers")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Flatten(cancelled, layers)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestWalkStopsAtError(t *testing.T) {
	f := build(t, []tartest.Entry{tartest.File("a/b", 0o644, nil), tartest.File("c", 0o644, nil)})
	stop := errors.New("stop")
	var seen []string
	err := f.Walk(func(p string, _ Info) error {
		seen = append(seen, p)
		if p == "/a/b" {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []string{"/a", "/a/b"}, seen)
}
