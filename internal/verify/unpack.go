package verify

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// unpack writes the flattened tree into dir, which must not exist or be
// empty. Every write goes through an os.Root at dir, so no entry (nor a
// symlink an entry created) can make a later write land outside it; the
// tree's own invariant (every parent is a directory) means entries never
// pass through symlinks in the first place. Directories are written 0755 and
// files keep their permission bits plus owner read/write, so the caller can
// remove the tree without root; ownership, setuid bits, devices and fifos
// are not reproduced.
func unpack(ctx context.Context, layers []v1.Layer, t *rootfs.FS, dir string) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := root.Close(); err == nil {
			err = cerr
		}
	}()
	files := map[rootfs.Source][]string{}
	perms := map[string]os.FileMode{}
	var links [][2]string // path, target
	err = t.Walk(func(p string, n rootfs.Info) error {
		rel := strings.TrimPrefix(p, "/")
		switch n.Type {
		case tar.TypeDir:
			return root.MkdirAll(rel, 0o755)
		case tar.TypeReg:
			files[n.Source] = append(files[n.Source], rel)
			perms[rel] = n.Mode.Perm() | 0o600
		case tar.TypeSymlink:
			links = append(links, [2]string{rel, n.Linkname})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dir, err)
	}
	want := make(map[rootfs.Source]bool, len(files))
	for s := range files {
		want[s] = true
	}
	err = rootfs.ReadSources(ctx, layers, want, func(src rootfs.Source, r io.Reader) error {
		return writeCopies(root, files[src], perms, r)
	})
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dir, err)
	}
	for _, l := range links {
		if err := root.Symlink(l[1], l[0]); err != nil {
			return fmt.Errorf("unpack into %s: %w", dir, err)
		}
	}
	return nil
}

// writeCopies writes r to every path (hardlinked names share contents).
func writeCopies(root *os.Root, paths []string, perms map[string]os.FileMode, r io.Reader) (err error) {
	ws := make([]io.Writer, 0, len(paths))
	for _, p := range paths {
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perms[p])
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		ws = append(ws, f)
	}
	_, err = io.Copy(io.MultiWriter(ws...), r)
	return err
}
