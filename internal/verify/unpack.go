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

// unpackLimits bound what unpack writes to disk, and who owns it.
type unpackLimits struct {
	maxBytes int64 // regular files' contents, hardlinked ones once
	maxFiles int   // entries of every type
	uid, gid int   // owner of everything written (the sandbox's root)
}

// tooBigError is an image whose flattened filesystem is over the limits;
// nothing was written.
type tooBigError struct {
	bytes, maxBytes int64
	files, maxFiles int
}

func (e *tooBigError) Error() string {
	if e.files > e.maxFiles {
		return fmt.Sprintf("the image unpacks to %d files, directories and links, more than the %d allowed", e.files, e.maxFiles)
	}
	return fmt.Sprintf("the image unpacks to %s, more than the %s allowed (--run-max-size)", formatBytes(e.bytes), formatBytes(e.maxBytes))
}

// unpack writes the flattened tree into dir, which must not exist or be
// empty, after checking that it fits lim (from the tree's headers, before
// writing anything; the bytes are counted again while written, in case a
// layer reads back differently). Every write goes through an os.Root at
// dir, so no entry (nor a symlink an entry created) can make a later write
// land outside it; the tree's own invariant (every parent is a directory)
// means entries never pass through symlinks in the first place. Directories
// are written 0755 and files keep their permission bits plus owner
// read/write; everything is owned by lim.uid:lim.gid; setuid bits, devices
// and fifos are not reproduced.
func unpack(ctx context.Context, layers []v1.Layer, t *rootfs.FS, dir string, lim unpackLimits) (err error) {
	files := map[rootfs.Source][]string{}
	perms := map[string]os.FileMode{}
	var dirs []string
	var links [][2]string // path, target
	size := &tooBigError{maxBytes: lim.maxBytes, maxFiles: lim.maxFiles}
	_ = t.Walk(func(p string, n rootfs.Info) error {
		rel := strings.TrimPrefix(p, "/")
		switch n.Type {
		case tar.TypeDir:
			dirs = append(dirs, rel)
		case tar.TypeReg:
			if files[n.Source] == nil {
				size.bytes += n.Size
			}
			files[n.Source] = append(files[n.Source], rel)
			perms[rel] = n.Mode.Perm() | 0o600
		case tar.TypeSymlink:
			links = append(links, [2]string{rel, n.Linkname})
		}
		size.files++
		return nil
	})
	if size.bytes > lim.maxBytes || size.files > lim.maxFiles {
		return size
	}

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
	wrapErr := func(err error) error { return fmt.Errorf("unpack into %s: %w", dir, err) }
	if err := root.Chown(".", lim.uid, lim.gid); err != nil {
		return wrapErr(err)
	}
	for _, d := range dirs {
		if err := root.Mkdir(d, 0o755); err != nil {
			return wrapErr(err)
		}
		if err := root.Chown(d, lim.uid, lim.gid); err != nil {
			return wrapErr(err)
		}
	}
	want := make(map[rootfs.Source]bool, len(files))
	for s := range files {
		want[s] = true
	}
	budget := &byteBudget{left: lim.maxBytes, err: size}
	err = rootfs.ReadSources(ctx, layers, want, func(src rootfs.Source, r io.Reader) error {
		return writeCopies(root, files[src], perms, io.TeeReader(r, budget), lim)
	})
	if err != nil {
		return wrapErr(err)
	}
	for _, l := range links {
		if err := root.Symlink(l[1], l[0]); err != nil {
			return wrapErr(err)
		}
		if err := root.Lchown(l[0], lim.uid, lim.gid); err != nil {
			return wrapErr(err)
		}
	}
	return nil
}

// writeCopies writes r to every path (hardlinked names share contents).
func writeCopies(root *os.Root, paths []string, perms map[string]os.FileMode, r io.Reader, lim unpackLimits) (err error) {
	ws := make([]io.Writer, 0, len(paths))
	for _, p := range paths {
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perms[p])
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		if err := f.Chown(lim.uid, lim.gid); err != nil {
			return err
		}
		ws = append(ws, f)
	}
	_, err = io.Copy(io.MultiWriter(ws...), r)
	return err
}

// byteBudget fails a write that would take the total past left bytes.
type byteBudget struct {
	left int64
	err  *tooBigError
}

func (b *byteBudget) Write(p []byte) (int, error) {
	b.left -= int64(len(p))
	if b.left < 0 {
		b.err.bytes = b.err.maxBytes - b.left
		return 0, b.err
	}
	return len(p), nil
}

// formatBytes prints n in binary units, e.g. "4.0 GiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
