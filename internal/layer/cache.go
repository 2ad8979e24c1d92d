package layer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Cache remembers layers across runs, keyed by what goes into them: every
// entry's path, kind, mode, owner, link target and file content, plus the
// epoch and gzip level. An unchanged binary is then neither re-tarred nor
// re-compressed. Blobs live in Dir/blobs, keys in Dir/keys, Go binaries'
// SHA-256 by build ID in Dir/sums (see sourceSum); all are written to a
// temporary name and renamed, so concurrent runs can share a Dir.
type Cache struct {
	Dir string
}

// cacheRecord is what a key file holds.
type cacheRecord struct {
	Digest string `json:"digest"`
	DiffID string `json:"diffID"`
	Size   int64  `json:"size"`
	// Blob is the blob file as last checked (written or hashed); absent
	// where it could not be read (see blobStamp).
	Blob *blobStamp `json:"blob,omitempty"`
}

// Write returns the cached layer for entries and opts, or writes it with
// Write and records it. opts.Dir is ignored: blobs go to the cache.
func (c *Cache) Write(ctx context.Context, entries []rootfs.Entry, opts Options) (l v1.Layer, hit bool, err error) {
	blobs := filepath.Join(c.Dir, "blobs")
	keys := filepath.Join(c.Dir, "keys")
	for _, d := range []string{blobs, keys} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, false, fmt.Errorf("layer cache: %w", err)
		}
	}
	key, err := c.cacheKey(ctx, entries, opts)
	if err != nil {
		return nil, false, err
	}
	keyFile := filepath.Join(keys, key+".json")
	if l, ok := c.lookup(keyFile, blobs); ok {
		return l, true, nil
	}
	opts.Dir = blobs
	l, err = Write(ctx, entries, opts)
	if err != nil {
		return nil, false, err
	}
	if err := c.record(keyFile, l); err != nil {
		return nil, false, err
	}
	return l, false, nil
}

func (c *Cache) lookup(keyFile, blobs string) (v1.Layer, bool) {
	data, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, false
	}
	var r cacheRecord
	if json.Unmarshal(data, &r) != nil {
		return nil, false
	}
	digest, err1 := v1.NewHash(r.Digest)
	diffID, err2 := v1.NewHash(r.DiffID)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	path := BlobPath(blobs, digest)
	l, err := Open(path, digest, diffID, r.Size)
	if err != nil {
		return nil, false // the blob went away: write it again
	}
	// Blobs are written without fsync (see Write): one a crash or a full
	// disk left short, zeroed or torn, or one changed since, no longer
	// hashes to its name. It is written again instead of being shipped.
	// A blob whose stamp says it is the file checked before, in this
	// boot, is not read again.
	if !c.stampMatches(path, r.Blob) && !blobIntact(path, digest) {
		_ = os.Remove(path)
		return nil, false
	}
	// Used now: Prune keeps what recent runs used. Touching the blob
	// changes its times, so the record takes its new stamp (best effort:
	// without it the next hit hashes the blob).
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	if st, ok := stampOf(path); ok {
		r.Blob = &st
		if data, err := json.Marshal(r); err == nil && writeAtomic(keyFile, data) == nil {
			return l, true
		}
	}
	_ = os.Chtimes(keyFile, now, now)
	return l, true
}

func (c *Cache) stampMatches(path string, want *blobStamp) bool {
	if want == nil {
		return false
	}
	st, ok := stampOf(path)
	return ok && st == *want
}

// Prune removes cached layers that no run has used for maxAge, so a cache
// kept between CI jobs does not grow without end. It returns the bytes freed.
func (c *Cache) Prune(maxAge time.Duration) (int64, error) {
	cutoff := time.Now().Add(-maxAge)
	var freed int64
	for _, sub := range []string{"keys", "blobs", "sums", "flat"} { // flat: release's flattened bases
		entries, err := os.ReadDir(filepath.Join(c.Dir, sub))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return freed, fmt.Errorf("layer cache: %w", err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || info.ModTime().After(cutoff) {
				continue
			}
			if os.Remove(filepath.Join(c.Dir, sub, e.Name())) == nil {
				freed += info.Size()
			}
		}
	}
	return freed, nil
}

// blobIntact reports whether the file at path hashes to digest.
func blobIntact(path string, digest v1.Hash) bool {
	sum, _, err := sha256File(path)
	return err == nil && hex.EncodeToString(sum) == digest.Hex
}

func (c *Cache) record(keyFile string, l v1.Layer) error {
	digest, _ := l.Digest()
	diffID, _ := l.DiffID()
	size, _ := l.Size()
	r := cacheRecord{Digest: digest.String(), DiffID: diffID.String(), Size: size}
	// Write hashed the blob's bytes as it wrote them.
	if st, ok := stampOf(BlobPath(filepath.Join(c.Dir, "blobs"), digest)); ok {
		r.Blob = &st
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return writeAtomic(keyFile, data)
}

// writeAtomic writes data to a temporary file beside file and renames it,
// so a concurrent run reads the whole record or none.
func writeAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".key-*")
	if err != nil {
		return fmt.Errorf("layer cache: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("layer cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("layer cache: %w", err)
	}
	return os.Rename(tmp.Name(), file)
}

// cacheKey hashes everything that decides a layer's bytes; a file's
// content by its SHA-256 (see sourceSum).
func (c *Cache) cacheKey(ctx context.Context, entries []rootfs.Entry, opts Options) (string, error) {
	sorted := append([]rootfs.Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	field := func(s string) { io.WriteString(h, strconv.Itoa(len(s))+":"+s) }
	field("helperbuild-layer-v1")
	field(strconv.FormatInt(opts.Epoch.Unix(), 10))
	level := opts.Level
	if level == 0 {
		level = DefaultLevel // a new default must not find the old default's layers
	}
	field(strconv.Itoa(level))
	if opts.Windows {
		field("windows") // absent for Linux layers: their keys stay as they were
	}
	for _, e := range sorted {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		field(e.Path)
		field(strconv.Itoa(int(e.Kind)))
		field(strconv.FormatUint(uint64(e.Mode), 8))
		field(strconv.Itoa(e.UID) + ":" + strconv.Itoa(e.GID))
		field(e.Linkname)
		if e.Kind == rootfs.File {
			if err := c.hashFile(h, e.Source, opts.Hashed); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile adds the file at path (its size and SHA-256) to h and tells
// hashed, if set.
func (c *Cache) hashFile(h hash.Hash, path string, hashed func(string, v1.Hash, int64)) error {
	sum, n, err := c.sourceSum(path)
	if err != nil {
		return fmt.Errorf("layer source: %w", err)
	}
	if hashed != nil {
		hashed(path, v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum)}, n)
	}
	io.WriteString(h, strconv.FormatInt(n, 10)+":")
	h.Write(sum)
	return nil
}

// sha256File returns the sha256 and the length of the file at path.
func sha256File(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return h.Sum(nil), n, nil
}
