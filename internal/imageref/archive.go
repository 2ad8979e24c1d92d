package imageref

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// extractArchive unpacks an OCI layout tar into dir. Only directories and
// regular files are accepted. Every write goes through an os.Root at dir (as
// verify's unpack does), so no entry can land outside it: not by "..", an
// absolute name, nor through a symlink found in dir.
func extractArchive(ctx context.Context, file, dir string) (err error) {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, root.Close()) }()
	tr := tar.NewReader(f)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("corrupt archive: %w", err)
		}
		name := path.Clean(hdr.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("corrupt archive: entry %q leaves the archive", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = root.MkdirAll(name, 0o755)
		case tar.TypeReg:
			if err = root.MkdirAll(path.Dir(name), 0o755); err == nil {
				err = writeFile(root, name, tr)
			}
		default:
			return fmt.Errorf("corrupt archive: entry %q has type %q; an OCI layout holds only files and directories", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			return fmt.Errorf("corrupt archive: entry %q: %w", hdr.Name, err)
		}
	}
	if _, err := root.Stat(specsv1.ImageIndexFile); err != nil {
		return fmt.Errorf("not an OCI layout archive: no index.json")
	}
	return nil
}

func writeFile(root *os.Root, name string, r io.Reader) error {
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
