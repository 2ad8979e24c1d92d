package publish

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/helperbuild/helperbuild/internal/outfile"
)

// ToArchive writes images as an OCI layout into a tar file (mode 0644
// before the umask). The layout is built in tmpDir and the tar is written
// next to file and renamed into place, so file is either the old content
// or the complete new one.
func ToArchive(ctx context.Context, file, tmpDir string, epoch time.Time, images []Image) error {
	dir, err := os.MkdirTemp(tmpDir, "oci-archive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := ToLayout(ctx, dir, images); err != nil {
		return err
	}
	err = outfile.Write(file, func(w io.Writer) error { return tarDir(ctx, w, dir, epoch) })
	if err != nil {
		return fmt.Errorf("output %s: %w", file, err)
	}
	return nil
}

// tarDir writes the regular files and directories under dir, sorted, with
// fixed ownership and times.
func tarDir(ctx context.Context, w io.Writer, dir string, epoch time.Time) error {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case fi.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
		default:
			return fmt.Errorf("unexpected file %s in layout", path)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	return tw.Close()
}
