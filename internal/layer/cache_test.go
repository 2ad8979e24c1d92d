package layer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// cacheSetup is an empty cache and one executable entry whose source file
// holds content.
func cacheSetup(t *testing.T, content string) (src string, entries []rootfs.Entry, opts Options, c *Cache) {
	src = filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.WriteFile(src, []byte(content), 0o755))
	entries = []rootfs.Entry{{Path: "/usr/bin/x", Kind: rootfs.File, Source: src, Mode: 0o755}}
	return src, entries, Options{Epoch: time.Unix(1700000000, 0)}, &Cache{Dir: t.TempDir()}
}

func TestCache(t *testing.T) {
	ctx := context.Background()
	src, entries, opts, c := cacheSetup(t, "binary v1")

	first, hit, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.False(t, hit)
	again, hit, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.True(t, hit, "same content, same layer from the cache")
	d1, _ := first.Digest()
	d2, _ := again.Digest()
	assert.Equal(t, d1, d2)

	// Each input that changes the bytes changes the key.
	for name, change := range map[string]func() ([]rootfs.Entry, Options){
		"content": func() ([]rootfs.Entry, Options) {
			require.NoError(t, os.WriteFile(src, []byte("binary v2"), 0o755))
			return entries, opts
		},
		"mode": func() ([]rootfs.Entry, Options) {
			e := entries[0]
			e.Mode = 0o700
			return []rootfs.Entry{e}, opts
		},
		"epoch": func() ([]rootfs.Entry, Options) { o := opts; o.Epoch = time.Unix(1, 0); return entries, o },
		"owner": func() ([]rootfs.Entry, Options) {
			e := entries[0]
			e.UID = 1000
			return []rootfs.Entry{e}, opts
		},
	} {
		es, o := change()
		_, hit, err := c.Write(ctx, es, o)
		require.NoError(t, err, name)
		assert.False(t, hit, name)
	}

	// A blob that went missing is written again.
	require.NoError(t, os.WriteFile(src, []byte("binary v1"), 0o755))
	require.NoError(t, os.Remove(BlobPath(filepath.Join(c.Dir, "blobs"), d1)))
	l, hit, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.False(t, hit)
	d3, _ := l.Digest()
	assert.Equal(t, d1, d3)
}

// A cached blob that no longer hashes to its digest (written without
// fsync, then a crash; or changed on disk) is not a hit: the layer is
// written again, with the right bytes.
func TestCacheRewritesCorruptBlob(t *testing.T) {
	ctx := context.Background()
	_, entries, opts, c := cacheSetup(t, "binary v1, long enough to matter")
	first, hit, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	require.False(t, hit)
	d, _ := first.Digest()
	size, _ := first.Size()
	blob := BlobPath(filepath.Join(c.Dir, "blobs"), d)
	require.NoError(t, os.WriteFile(blob, make([]byte, size), 0o644)) // what a crash can leave: zeros, same size

	again, hit, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.False(t, hit, "a zeroed blob is no hit")
	d2, _ := again.Digest()
	assert.Equal(t, d, d2)
	assert.True(t, blobIntact(blob, d), "the blob was written again")
	_, hit, err = c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.True(t, hit)
}

func TestCachePrune(t *testing.T) {
	ctx := context.Background()
	c := &Cache{Dir: t.TempDir()}
	write := func(content string) v1.Hash {
		src := filepath.Join(t.TempDir(), "bin")
		require.NoError(t, os.WriteFile(src, []byte(content), 0o755))
		l, _, err := c.Write(ctx, []rootfs.Entry{{Path: "/usr/bin/x", Kind: rootfs.File, Source: src, Mode: 0o755}}, Options{})
		require.NoError(t, err)
		d, _ := l.Digest()
		return d
	}
	old, recent := write("old"), write("recent")
	past := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(BlobPath(filepath.Join(c.Dir, "blobs"), old), past, past))
	keys, err := os.ReadDir(filepath.Join(c.Dir, "keys"))
	require.NoError(t, err)
	for _, k := range keys {
		require.NoError(t, os.Chtimes(filepath.Join(c.Dir, "keys", k.Name()), past, past))
	}
	freed, err := c.Prune(7 * 24 * time.Hour)
	require.NoError(t, err)
	assert.Positive(t, freed)
	assert.NoFileExists(t, BlobPath(filepath.Join(c.Dir, "blobs"), old))
	assert.FileExists(t, BlobPath(filepath.Join(c.Dir, "blobs"), recent))
}

// A hit does not hash the blob again while its stamp (boot, inode, size,
// times) says it is the file checked before; a blob rewritten in place
// with its mtime set back, or a stamp of another boot (a crash may have
// left the unsynced blob zeroed), is hashed and, being wrong, written
// again.
func TestCacheBlobStamp(t *testing.T) {
	if _, ok := stampOf(t.TempDir()); !ok {
		t.Skip("no boot ID or inode here: every hit hashes its blob")
	}
	ctx := context.Background()
	_, entries, opts, c := cacheSetup(t, "binary v1, long enough to matter")
	first, _, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	d, _ := first.Digest()
	size, _ := first.Size()
	blob := BlobPath(filepath.Join(c.Dir, "blobs"), d)
	keys, err := filepath.Glob(filepath.Join(c.Dir, "keys", "*.json"))
	require.NoError(t, err)
	require.Len(t, keys, 1)
	readRec := func() cacheRecord {
		var r cacheRecord
		data, err := os.ReadFile(keys[0])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &r))
		return r
	}
	writeRec := func(r cacheRecord) {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(keys[0], data, 0o644))
	}
	corrupt := func() {
		fi, err := os.Stat(blob)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(blob, make([]byte, size), 0o644))
		require.NoError(t, os.Chtimes(blob, fi.ModTime(), fi.ModTime()))
	}
	require.NotNil(t, readRec().Blob, "the written blob is stamped")

	// Rewritten in place, same size, mtime set back: its change time
	// differs, so it is hashed and written again.
	corrupt()
	_, hit, err := c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.False(t, hit)
	assert.True(t, blobIntact(blob, d))

	// The stamp is what spares the hash: a record stamped with the
	// corrupted file's own stamp hands it out (which is why only this
	// boot's stamps count) ...
	corrupt()
	r := readRec()
	st, ok := stampOf(blob)
	require.True(t, ok)
	r.Blob = &st
	writeRec(r)
	_, hit, err = c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.True(t, hit, "a matching stamp is trusted without hashing")

	// ... and the same stamp from another boot is not.
	r = readRec()
	st, _ = stampOf(blob)
	st.Boot = "another-boot"
	r.Blob = &st
	writeRec(r)
	_, hit, err = c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.False(t, hit)
	assert.True(t, blobIntact(blob, d))
	_, hit, err = c.Write(ctx, entries, opts)
	require.NoError(t, err)
	assert.True(t, hit)
}
