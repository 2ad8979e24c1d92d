package imageref

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// extractArchive unpacks an OCI layout tar into dir. Only directories and
// regular files are accepted, and no entry may leave dir.
func extractArchive(ctx context.Context, file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
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
		clean := filepath.Clean(filepath.FromSlash(hdr.Name))
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return fmt.Errorf("corrupt archive: entry %q leaves the archive", hdr.Name)
		}
		target := filepath.Join(dir, clean)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := writeFile(target, tr); err != nil {
				return err
			}
		default:
			return fmt.Errorf("corrupt archive: entry %q has type %q; an OCI layout holds only files and directories", hdr.Name, hdr.Typeflag)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, specsv1.ImageIndexFile)); err != nil {
		return fmt.Errorf("not an OCI layout archive: no index.json")
	}
	return nil
}

func writeFile(path string, r io.Reader) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("corrupt archive: %w", err)
	}
	return out.Close()
}
