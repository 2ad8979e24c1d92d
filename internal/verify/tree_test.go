package verify

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildTree applies layers of entries in order.
func buildTree(t testing.TB, layers ...[]tf) *tree {
	t.Helper()
	tr := newTree()
	for i, entries := range layers {
		r := tar.NewReader(bytes.NewReader(tarBytes(t, entries...)))
		for seq := 0; ; seq++ {
			hdr, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			tr.apply(hdr, i, seq)
		}
	}
	return tr
}

// listing prints the tree as "path type[->link]" lines.
func listing(tr *tree) string {
	var b strings.Builder
	_ = tr.walk(func(p string, n *inode) error {
		b.WriteString(p)
		switch n.typ {
		case tar.TypeDir:
			b.WriteString("/")
		case tar.TypeSymlink:
			b.WriteString(" -> " + n.link)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

func TestTreeApply(t *testing.T) {
	body := []byte("x")
	tests := []struct {
		name   string
		layers [][]tf
		want   string
		issues []string
	}{
		{
			name:   "implicit parents and names with ./ and /",
			layers: [][]tf{{file("./usr/bin/a", 0o755, body), file("/etc/b", 0o644, body), dir("./", 0o755)}},
			want:   "/etc/\n/etc/b\n/usr/\n/usr/bin/\n/usr/bin/a\n",
		},
		{
			name:   "pax global headers (git archive) are not files",
			layers: [][]tf{{{name: "pax_global_header", typ: tar.TypeXGlobalHeader}, file("a", 0o644, body)}},
			want:   "/a\n",
		},
		{
			name: "whiteout deletes a lower file and a lower directory tree",
			layers: [][]tf{
				{file("bin/bash", 0o755, body), file("bin/sh", 0o755, body), file("opt/x/y/z", 0o644, body)},
				{file("bin/.wh.bash", 0, nil), file(".wh.opt", 0, nil)},
			},
			want: "/bin/\n/bin/sh\n",
		},
		{
			name: "whiteout does not delete what its own layer adds",
			layers: [][]tf{
				{file("a", 0o644, body)},
				{file("b", 0o644, body), file(".wh.b", 0, nil)},
			},
			want: "/a\n/b\n",
		},
		{
			name: "opaque directory hides lower contents, keeps its own layer's",
			layers: [][]tf{
				{file("etc/old", 0o644, body), file("etc/sub/old", 0o644, body), file("keep", 0o644, body)},
				{file("etc/new", 0o644, body), file("etc/sub/new", 0o644, body), file("etc/.wh..wh..opq", 0, nil)},
			},
			want: "/etc/\n/etc/new\n/etc/sub/\n/etc/sub/new\n/keep\n",
		},
		{
			name: "a file replaces a directory and its contents",
			layers: [][]tf{
				{file("x/y", 0o644, body)},
				{file("x", 0o644, body)},
			},
			want: "/x\n",
		},
		{
			name: "a directory replaces a symlink on the way (overlayfs)",
			layers: [][]tf{
				{file("usr/lib/z", 0o644, body), symlink("lib", "usr/lib")},
				{file("lib/y", 0o644, body)},
			},
			want: "/lib/\n/lib/y\n/usr/\n/usr/lib/\n/usr/lib/z\n",
		},
		{
			name:   "a directory over a directory merges",
			layers: [][]tf{{file("d/a", 0o644, body)}, {dir("d", 0o700), file("d/b", 0o644, body)}},
			want:   "/d/\n/d/a\n/d/b\n",
		},
		{
			name:   "hardlinks to missing or non-regular targets are issues",
			layers: [][]tf{{dir("d", 0o755), hardlink("l1", "nope"), hardlink("l2", "d")}},
			want:   "/d/\n",
			issues: []string{
				"/l1 is a hardlink to /nope, which is not a regular file in the layers below it",
				"/l2 is a hardlink to /d, which is not a regular file in the layers below it",
			},
		},
		{
			name:   "dot-dot cannot leave the root",
			layers: [][]tf{{file("../../etc/passwd", 0o644, body), file("a/../../b", 0o644, body)}},
			want:   "/b\n/etc/\n/etc/passwd\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := buildTree(t, tt.layers...)
			assert.Equal(t, tt.want, listing(tr))
			assert.Equal(t, tt.issues, tr.issues)
		})
	}
}

func TestTreeHardlinkSharesSource(t *testing.T) {
	tr := buildTree(t,
		[]tf{file("bin/busybox", 0o755, []byte("elf"))},
		[]tf{hardlink("usr/bin/git", "bin/busybox")},
	)
	bb, err := tr.lookup("/bin/busybox")
	require.NoError(t, err)
	git, err := tr.lookup("/usr/bin/git")
	require.NoError(t, err)
	assert.Equal(t, source{0, 0}, git.src, "contents stay where the target's are")
	assert.Equal(t, bb.mode, git.mode)
	assert.Equal(t, 1, git.layer)
}

func TestTreeResolve(t *testing.T) {
	tr := buildTree(t, []tf{
		file("bin/busybox", 0o755, []byte("x")),
		symlink("bin/sh", "busybox"),
		symlink("bin/ash", "/bin/busybox"),
		symlink("usr/bin/env", "../../bin/busybox"),
		symlink("sbin", "bin"),
		symlink("escape", "../../../../bin/sh"),
		symlink("loop1", "loop2"), symlink("loop2", "loop1"),
		symlink("dangling", "nowhere"),
		symlink("bin/dirlink", "../usr/bin"),
	})
	tests := []struct {
		in, want string
		follow   bool
		err      error
	}{
		{in: "/bin/sh", want: "/bin/busybox", follow: true},
		{in: "/bin/sh", want: "/bin/sh", follow: false},
		{in: "/bin/ash", want: "/bin/busybox", follow: true},
		{in: "/usr/bin/env", want: "/bin/busybox", follow: true},
		{in: "/sbin/sh", want: "/bin/busybox", follow: true},
		{in: "/sbin/sh", want: "/bin/sh", follow: false},
		{in: "/escape", want: "/bin/busybox", follow: true},
		{in: "/bin/dirlink/env", want: "/bin/busybox", follow: true},
		{in: "/bin/./../bin/sh", want: "/bin/busybox", follow: true},
		{in: "/", want: "/", follow: true},
		{in: "/loop1", err: errLoop, follow: true},
		{in: "/dangling", err: errNotFound, follow: true},
		{in: "/bin/busybox/x", err: errNotDir, follow: true},
		{in: "/nope/x", err: errNotFound, follow: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, p, err := tr.resolve(tt.in, tt.follow)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
			assert.NotNil(t, n)
		})
	}
}

// FuzzTreeApply feeds arbitrary tar names and link targets through apply and
// resolve: nothing panics, every resolved path is clean and absolute, and
// the walk only yields clean absolute paths.
func FuzzTreeApply(f *testing.F) {
	f.Add("bin/sh", "busybox", "bin/.wh.sh", "/bin/sh", byte(0))
	f.Add("../../x", "/../..", "x/.wh..wh..opq", "x/y", byte(1))
	f.Add("a/b/c", "../../../a", "a", "a/b/c/d", byte(2))
	f.Fuzz(func(t *testing.T, name1, link, name2, query string, kind byte) {
		types := []byte{tar.TypeReg, tar.TypeDir, tar.TypeSymlink, tar.TypeLink}
		tr := newTree()
		tr.apply(&tar.Header{Name: name1, Typeflag: types[int(kind)%4], Linkname: link, Mode: 0o755}, 0, 0)
		tr.apply(&tar.Header{Name: name2, Typeflag: types[int(kind/4)%4], Linkname: link, Mode: 0o644}, 1, 0)
		tr.apply(&tar.Header{Name: link, Typeflag: tar.TypeSymlink, Linkname: name1}, 1, 1)
		for _, follow := range []bool{true, false} {
			_, p, err := tr.resolve(query, follow)
			if err == nil && (!strings.HasPrefix(p, "/") || (p != "/" && cleanName(p) != p)) {
				t.Fatalf("resolve(%q) = %q, not a clean absolute path", query, p)
			}
		}
		_ = tr.walk(func(p string, _ *inode) error {
			if cleanName(p) != p {
				t.Fatalf("walk yields %q", p)
			}
			return nil
		})
	})
}
