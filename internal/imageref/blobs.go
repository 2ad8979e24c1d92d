package imageref

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Blobs is one run's store of layer blobs, shared by every reader of the
// run: the platforms of an index, the images of a release, the checks of
// build and push, verify. Set it in Options.Blobs and every layer Read hands
// out reads through it.
//
// A blob from a registry is fetched once per run: the first reader of a
// digest fetches it into a temporary file, the digest and size are checked,
// and only then is the file renamed into place; readers of the same digest
// meanwhile wait for that one fetch. A blob already on disk (an oci: layout,
// an unpacked oci-archive:) is checked in place once and read from where it
// is. Readers only ever open complete, checked files, so two platforms that
// share a layer never see each other's partial download. A failed fetch is
// not remembered: the next reader tries again.
type Blobs struct {
	dir string
	mu  sync.Mutex
	m   map[v1.Hash]*storedBlob
}

// storedBlob is one digest's entry; done is closed once path or err is set.
type storedBlob struct {
	done chan struct{}
	path string
	err  error
}

// NewBlobs returns a store that keeps fetched blobs in dir (created when
// first needed). The caller removes dir after the run.
func NewBlobs(dir string) *Blobs {
	return &Blobs{dir: dir, m: map[v1.Hash]*storedBlob{}}
}

// blobSource says where a digest's bytes come from: a file of a local
// layout (local), else the stream fetch opens.
type blobSource struct {
	local string
	fetch func() (io.ReadCloser, error)
}

// file returns the path of the complete, checked blob d of size bytes.
func (b *Blobs) file(d v1.Hash, size int64, src blobSource) (string, error) {
	b.mu.Lock()
	e, ok := b.m[d]
	if !ok {
		e = &storedBlob{done: make(chan struct{})}
		b.m[d] = e
	}
	b.mu.Unlock()
	if ok {
		<-e.done
		return e.path, e.err
	}
	if src.local != "" {
		e.path, e.err = src.local, checkFile(src.local, d, size)
		if e.err != nil {
			e.err = fmt.Errorf("%w; the layout is damaged: write it again", e.err)
		}
	} else {
		e.path, e.err = b.fetch(d, size, src.fetch)
	}
	if e.err != nil {
		e.err = fmt.Errorf("blob %s: %w", d, e.err)
		b.mu.Lock()
		delete(b.m, d) // the next reader tries again
		b.mu.Unlock()
	}
	close(e.done)
	return e.path, e.err
}

// fetch copies the blob into a temporary file, checks it and renames it to
// its final name.
func (b *Blobs) fetch(d v1.Hash, size int64, open func() (io.ReadCloser, error)) (path string, err error) {
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return "", err
	}
	rc, err := open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(b.dir, ".fetch-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h, err := v1.Hasher(d.Algorithm)
	if err != nil {
		return "", err
	}
	n, err := io.Copy(io.MultiWriter(tmp, h), rc)
	if err != nil {
		return "", err
	}
	if err := matches(d, size, h.Sum(nil), n); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	path = filepath.Join(b.dir, d.Algorithm+"-"+d.Hex)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// checkFile checks that the file at path is the blob d of size bytes.
func checkFile(path string, d v1.Hash, size int64) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("missing from the layout (%s does not exist)", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := v1.Hasher(d.Algorithm)
	if err != nil {
		return err
	}
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	return matches(d, size, h.Sum(nil), n)
}

// matches compares what was read with what the manifest says.
func matches(d v1.Hash, size int64, sum []byte, n int64) error {
	if got := hex.EncodeToString(sum); got != d.Hex || n != size {
		return fmt.Errorf("content is corrupt: %d bytes hashing to %s:%s, the manifest says %d bytes", n, d.Algorithm, got, size)
	}
	return nil
}
