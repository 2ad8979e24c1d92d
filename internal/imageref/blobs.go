package imageref

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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
//
// A store made with KeepBlobs is kept between runs (a cache directory): a
// blob an earlier run fetched is read from there, after the same check, so
// a base image's layers, manifests and config are fetched once per cache
// rather than once per run; Prune forgets what no run used for a while.
type Blobs struct {
	dir   string
	keep  bool
	files memo[v1.Hash, string] // each blob's checked file
}

// NewBlobs returns a store that keeps fetched blobs in dir (created when
// first needed). The caller removes dir after the run.
func NewBlobs(dir string) *Blobs {
	return &Blobs{dir: dir}
}

// KeepBlobs returns a store in dir that later runs read again (see Blobs).
// Runs may share dir at once: files appear under their digest only
// complete (written aside, checked, renamed).
func KeepBlobs(dir string) *Blobs {
	return &Blobs{dir: dir, keep: true}
}

// Kept reports whether b is kept between runs (KeepBlobs).
func (b *Blobs) Kept() bool { return b != nil && b.keep }

// path is where blob d lives in b.
func (b *Blobs) path(d v1.Hash) string { return filepath.Join(b.dir, d.Algorithm+"-"+d.Hex) }

// kept returns the path of blob d of size bytes when an earlier run left
// it in a kept store and it is intact; its time is
// renewed, for Prune. A damaged file is removed, to be fetched again.
func (b *Blobs) kept(d v1.Hash, size int64) (string, bool) {
	if !b.keep {
		return "", false
	}
	path := b.path(d)
	if _, err := os.Stat(path); err != nil {
		return "", false
	}
	if checkFile(path, d, size) != nil {
		os.Remove(path)
		return "", false
	}
	touch(path)
	return path, true
}

// touch renews path's time: a kept blob in use is not pruned.
func touch(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// Small returns the bytes of blob d (a manifest or a config: small enough
// to hold), from a kept store when an earlier run left them there intact,
// else from fetch, checked against d and, in a kept store, written there
// (best effort: a store that cannot take it costs the next run a fetch).
func (b *Blobs) Small(d v1.Hash, fetch func() ([]byte, error)) ([]byte, error) {
	if b.keep {
		path := b.path(d)
		if data, err := os.ReadFile(path); err == nil {
			if digestOf(data, d) {
				touch(path)
				return data, nil
			}
			os.Remove(path) // damaged: fetched again below
		}
	}
	data, err := fetch()
	if err != nil {
		return nil, err
	}
	if !digestOf(data, d) {
		return nil, fmt.Errorf("blob %s: content is corrupt: %d bytes that hash otherwise", d, len(data))
	}
	if b.keep {
		_ = b.write(d, data)
	}
	return data, nil
}

// digestOf reports whether data hashes to d.
func digestOf(data []byte, d v1.Hash) bool {
	h, err := v1.Hasher(d.Algorithm)
	if err != nil {
		return false
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)) == d.Hex
}

// write puts checked bytes under d: aside first, then renamed.
func (b *Blobs) write(d v1.Hash, data []byte) error {
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(b.dir, ".fetch-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), b.path(d)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Prune removes from a kept store the blobs no run has used for maxAge
// (and what interrupted runs left aside as long ago), and returns the
// bytes freed.
func (b *Blobs) Prune(maxAge time.Duration) (int64, error) {
	if !b.Kept() {
		return 0, nil
	}
	entries, err := os.ReadDir(b.dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("base blob cache: %w", err)
	}
	cutoff := time.Now().Add(-maxAge)
	var freed int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.ModTime().After(cutoff) {
			continue
		}
		if os.Remove(filepath.Join(b.dir, e.Name())) == nil {
			freed += info.Size()
		}
	}
	return freed, nil
}

// blobSource says where a digest's bytes come from: a file of a local
// layout (local), else the stream fetch opens.
type blobSource struct {
	local string
	fetch func() (io.ReadCloser, error)
}

// file returns the path of the complete, checked blob d of size bytes.
func (b *Blobs) file(d v1.Hash, size int64, src blobSource) (string, error) {
	return b.files.get(d, func() (string, error) {
		var path string
		var err error
		switch {
		case src.local != "":
			if path, err = src.local, checkFile(src.local, d, size); err != nil {
				err = fmt.Errorf("%w; the layout is damaged: write it again", err)
			}
		default:
			var ok bool
			if path, ok = b.kept(d, size); !ok {
				path, err = b.fetch(d, size, src.fetch)
			}
		}
		if err != nil {
			return path, fmt.Errorf("blob %s: %w", d, err)
		}
		return path, nil
	})
}

// open opens the complete, checked blob d of size bytes. In a kept store
// another run's Prune may remove a file between its check and its
// opening: the blob is then fetched again, once.
func (b *Blobs) open(d v1.Hash, size int64, src blobSource) (*os.File, error) {
	for try := 0; ; try++ {
		path, err := b.file(d, size, src)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) || !b.keep || src.local != "" || try > 0 {
			return f, err
		}
		b.files.forget(d, func(p string) bool { return p == path })
	}
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
	path = b.path(d)
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
