package rootfs

import (
	"archive/tar"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

func TestResolve(t *testing.T) {
	f := build(t, []tartest.Entry{
		tartest.File("bin/busybox", 0o755, []byte("x")),
		tartest.Symlink("bin/sh", "busybox"),
		tartest.Symlink("bin/ash", "/bin/busybox"),
		tartest.Symlink("usr/bin/env", "../../bin/busybox"),
		tartest.Symlink("sbin", "bin"),
		tartest.Symlink("escape", "../../../../bin/sh"),
		tartest.Symlink("loop1", "loop2"), tartest.Symlink("loop2", "loop1"),
		tartest.Symlink("dangling", "nowhere"),
		tartest.Symlink("bin/dirlink", "../usr/bin"),
		tartest.Symlink("abs", "/usr/lib/missing"),
		tartest.Symlink("out", "../../.."),
	})
	tests := []struct {
		in, want string
		follow   bool
		typ      byte
		err      error
	}{
		{in: "/bin/sh", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/bin/sh", want: "/bin/sh", follow: false, typ: tar.TypeSymlink},
		{in: "/bin/ash", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/usr/bin/env", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/sbin/sh", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/sbin/sh", want: "/bin/sh", follow: false, typ: tar.TypeSymlink},
		{in: "/sbin", want: "/bin", follow: true, typ: tar.TypeDir},
		{in: "/escape", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/bin/dirlink/env", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/bin/./../bin/sh", want: "/bin/busybox", follow: true, typ: tar.TypeReg},
		{in: "/out/bin", want: "/bin", follow: true, typ: tar.TypeDir},
		{in: "/", want: "/", follow: true, typ: tar.TypeDir},
		{in: "", want: "/", follow: true, typ: tar.TypeDir},
		{in: "/loop1", err: ErrLoop, follow: true},
		{in: "/loop1/x", err: ErrLoop},
		{in: "/bin/busybox/x", err: ErrNotDir, follow: true},
		// Missing: the path is where creating it would land.
		{in: "/dangling", want: "/nowhere", err: ErrNotExist, follow: true},
		{in: "/dangling/x", want: "/nowhere/x", err: ErrNotExist},
		{in: "/nope/x", want: "/nope/x", err: ErrNotExist, follow: true},
		{in: "/sbin/new/x", want: "/bin/new/x", err: ErrNotExist},
		{in: "/abs/x", want: "/usr/lib/missing/x", err: ErrNotExist},
		{in: "/out/opt/x", want: "/opt/x", err: ErrNotExist},
		{in: "/nope/../sbin/x", want: "/sbin/x", err: ErrNotExist, follow: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, info, err := f.Resolve(tt.in, tt.follow)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				assert.Equal(t, tt.want, p)
				assert.Equal(t, Info{}, info)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
			assert.Equal(t, tt.typ, info.Type)
		})
	}
}

// FuzzAdd feeds arbitrary tar names and link targets through Add and
// Resolve: nothing panics, every resolved path (also of a missing one) is
// clean and absolute, and Walk only yields clean absolute paths.
func FuzzAdd(f *testing.F) {
	f.Add("bin/sh", "busybox", "bin/.wh.sh", "/bin/sh", byte(0))
	f.Add("../../x", "/../..", "x/.wh..wh..opq", "x/y", byte(1))
	f.Add("a/b/c", "../../../a", "a", "a/b/c/d", byte(2))
	f.Fuzz(func(t *testing.T, name1, link, name2, query string, kind byte) {
		types := []byte{tar.TypeReg, tar.TypeDir, tar.TypeSymlink, tar.TypeLink}
		fsys := New()
		fsys.Add(0, 0, &tar.Header{Name: name1, Typeflag: types[int(kind)%4], Linkname: link, Mode: 0o755})
		fsys.Add(1, 0, &tar.Header{Name: name2, Typeflag: types[int(kind/4)%4], Linkname: link, Mode: 0o644})
		fsys.Add(1, 1, &tar.Header{Name: link, Typeflag: tar.TypeSymlink, Linkname: name1})
		for _, follow := range []bool{true, false} {
			p, _, err := fsys.Resolve(query, follow)
			if (err == nil || err == ErrNotExist) && (!strings.HasPrefix(p, "/") || (p != "/" && Clean(p) != p)) {
				t.Fatalf("Resolve(%q) = %q, %v: not a clean absolute path", query, p, err)
			}
		}
		_ = fsys.Walk(func(p string, _ Info) error {
			if Clean(p) != p {
				t.Fatalf("walk yields %q", p)
			}
			return nil
		})
	})
}
