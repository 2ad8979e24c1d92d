package layer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fileLayer is a gzip-compressed layer stored in one file, with digest,
// DiffID and size known in advance. Every Compressed or Uncompressed call
// opens the file anew, so the layer can be read any number of times.
type fileLayer struct {
	path   string
	digest v1.Hash
	diffID v1.Hash
	size   int64
	// source is set on a layer this process wrote: Uncompressed then
	// produces the tar stream again from it, checked against diffID,
	// instead of decompressing the blob (several times the CPU).
	source *tarSource
}

var _ v1.Layer = (*fileLayer)(nil)

// BlobPath is where Write stores the layer with the given digest in dir:
// dir/<hex>, the same naming as an OCI layout's blobs/<algorithm>/ directory.
func BlobPath(dir string, digest v1.Hash) string {
	return filepath.Join(dir, digest.Hex)
}

// Open returns the layer stored at path by an earlier Write, trusting the
// given digest and DiffID (a cache records them) and checking only that the
// file exists and has the given compressed size.
func Open(path string, digest, diffID v1.Hash, size int64) (v1.Layer, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", digest, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() != size {
		return nil, fmt.Errorf("layer %s: %s is %d bytes (%v), want a regular file of %d", digest, path, fi.Size(), fi.Mode().Type(), size)
	}
	return &fileLayer{path: path, digest: digest, diffID: diffID, size: size}, nil
}

// Digest is the sha256 of the compressed blob.
func (l *fileLayer) Digest() (v1.Hash, error) { return l.digest, nil }

// DiffID is the sha256 of the uncompressed tar stream.
func (l *fileLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }

// Size is the compressed size in bytes.
func (l *fileLayer) Size() (int64, error) { return l.size, nil }

// MediaType is always the OCI tar+gzip layer type.
func (l *fileLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

// Compressed opens the blob file.
func (l *fileLayer) Compressed() (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", l.digest, err)
	}
	return f, nil
}

// Uncompressed returns the layer's tar stream: for a layer Write made in
// this process, written again from its source files and checked against
// the DiffID (the hash of the very bytes that were compressed into the
// blob); otherwise decompressed from the blob file.
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) {
	if l.source != nil {
		return l.source.open(l.diffID), nil
	}
	f, err := os.Open(l.path)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", l.digest, err)
	}
	gz, err := newGzipReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("layer %s: %s: %w", l.digest, l.path, err)
	}
	return &gunzipReadCloser{Reader: gz, gz: gz, f: f}, nil
}

// gunzipReadCloser closes both the gzip reader and the file under it.
type gunzipReadCloser struct {
	io.Reader
	gz io.Closer
	f  *os.File
}

func (r *gunzipReadCloser) Close() error {
	return errors.Join(r.gz.Close(), r.f.Close())
}
