package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// isArchive reports whether ADD would unpack the file: a tar, plain or
// compressed with gzip, bzip2 or zstd, as BuildKit detects it by content.
// xz is taken to be an archive without looking inside.
func isArchive(name string) (bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 6)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	var r io.Reader = f
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(f)
		if err != nil {
			return false, nil
		}
		defer gz.Close()
		r = gz
	case bytes.HasPrefix(head, []byte("BZh")):
		r = bzip2.NewReader(f)
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return false, nil
		}
		defer zr.Close()
		r = zr
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return true, nil
	}
	block := make([]byte, 512)
	if _, err := io.ReadFull(r, block); err != nil {
		return false, nil
	}
	_, err = tar.NewReader(io.MultiReader(bytes.NewReader(block), r)).Next()
	return err == nil, nil
}
