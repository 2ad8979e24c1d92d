package layer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// goBinary links a small Go program for linux/amd64 into dir/name with
// the extra -ldflags given (an -X value, a -buildid=).
func goBinary(t *testing.T, dir, name, ldflags string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "prog")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module prog\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nvar v string\n\nfunc main() { println(v) }\n"), 0o644))
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// hashedBy writes the layer of src and returns whether it was a hit and
// the SHA-256 the cache handed to Options.Hashed.
func hashedBy(t *testing.T, c *Cache, src string) (v1.Hash, bool, v1.Hash) {
	t.Helper()
	var got v1.Hash
	opts := Options{Epoch: time.Unix(1700000000, 0), Hashed: func(_ string, h v1.Hash, _ int64) { got = h }}
	l, hit, err := c.Write(context.Background(), []rootfs.Entry{{Path: "/usr/bin/x", Kind: rootfs.File, Source: src, Mode: 0o755}}, opts)
	require.NoError(t, err)
	d, err := l.Digest()
	require.NoError(t, err)
	return d, hit, got
}

func fileSHA256(t *testing.T, path string) v1.Hash {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s := sha256.Sum256(data)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
}

// sameStat gives path the size and modification time it had in fi, as a
// tool that rewrites a file in place and restores its times would.
func sameStat(t *testing.T, path string, fi os.FileInfo) {
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), st.Size(), "the test needs a change of the same size")
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
}

// A Go binary's SHA-256 is recorded under its build ID: the next run takes
// it from there (the record, not the file, decides the key), and a binary
// relinked with other content of the same size and the same mtime has
// another build ID and is layered again.
func TestGoBinarySumStandsInForItsContent(t *testing.T) {
	dir, c := t.TempDir(), &Cache{Dir: t.TempDir()}
	bin := goBinary(t, dir, "app", "-X main.v=aaaa")
	fi, err := os.Stat(bin)
	require.NoError(t, err)

	d1, hit, sum := hashedBy(t, c, bin)
	assert.False(t, hit)
	assert.Equal(t, fileSHA256(t, bin), sum)
	recs, err := filepath.Glob(filepath.Join(c.Dir, "sums", "*.json"))
	require.NoError(t, err)
	require.Len(t, recs, 1, "the binary's sum is recorded")

	d2, hit, sum2 := hashedBy(t, c, bin)
	assert.True(t, hit)
	assert.Equal(t, d1, d2)
	assert.Equal(t, sum, sum2, "the SBOM gets the same digest from the record")

	// The record is what the key uses: one that says another sum gives
	// another key (so an unchanged binary is not read again).
	data, err := json.Marshal(sumRecord{SHA256: hex.EncodeToString(make([]byte, 32)), Size: fi.Size()})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(recs[0], data, 0o644))
	_, hit, sum3 := hashedBy(t, c, bin)
	assert.False(t, hit)
	assert.Equal(t, make([]byte, 32), mustHex(t, sum3.Hex))
	require.NoError(t, os.Remove(recs[0]))

	// Other content, same size, same mtime: a new build ID, a new layer.
	goBinary(t, dir, "app", "-X main.v=bbbb")
	sameStat(t, bin, fi)
	d4, hit, sum4 := hashedBy(t, c, bin)
	assert.False(t, hit, "a relinked binary is layered again")
	assert.NotEqual(t, d1, d4)
	assert.Equal(t, fileSHA256(t, bin), sum4)
	fresh, _, _ := hashedBy(t, &Cache{Dir: t.TempDir()}, bin)
	assert.Equal(t, fresh, d4, "the same layer as without a cache")
}

// A binary whose build ID the go command did not write (none with
// -buildid=, or one of the user's own that stays the same whatever the
// content) is hashed every time: a change of its bytes that keeps size,
// mtime and build ID is layered again.
func TestBinaryWithoutGoBuildIDIsHashed(t *testing.T) {
	for name, ldflags := range map[string]string{
		"empty build ID":        "-buildid=",
		"user's own build ID":   "-buildid=v1.2.3",
		"ID of the wrong shape": "-buildid=AAAAAAAAAAAAAAAAAAAA/AAAAAAAAAAAAAAAAAAAA/AAAAAAAAAAAAAAAAAAAA",
	} {
		t.Run(name, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			bin := goBinary(t, t.TempDir(), "app", "-X main.v=aaaa "+ldflags)
			fi, err := os.Stat(bin)
			require.NoError(t, err)
			f, err := os.Open(bin)
			require.NoError(t, err)
			_, isGo := readGoBuildID(f)
			f.Close()
			assert.False(t, isGo)
			d1, hit, _ := hashedBy(t, c, bin)
			require.False(t, hit)
			_, hit, _ = hashedBy(t, c, bin)
			require.True(t, hit)

			data, err := os.ReadFile(bin)
			require.NoError(t, err)
			i := bytes.Index(data, []byte("aaaa"))
			require.Positive(t, i)
			copy(data[i:], "bbbb") // in place: same size, same build ID
			require.NoError(t, os.WriteFile(bin, data, fi.Mode()))
			sameStat(t, bin, fi)
			d2, hit, sum := hashedBy(t, c, bin)
			assert.False(t, hit, "changed bytes are layered again")
			assert.NotEqual(t, d1, d2)
			assert.Equal(t, fileSHA256(t, bin), sum)
		})
	}
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestReadGoBuildID(t *testing.T) {
	bin := goBinary(t, t.TempDir(), "app", "")
	f, err := os.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	id, ok := readGoBuildID(f)
	require.True(t, ok)
	out, err := exec.CommandContext(t.Context(), "go", "tool", "buildid", bin).Output()
	require.NoError(t, err)
	assert.Equal(t, string(bytes.TrimSpace(out)), id.id, "the ID go tool buildid reads")

	_, ok = readGoBuildID(bytes.NewReader([]byte("#!/bin/sh\necho not ELF\n")))
	assert.False(t, ok)
}

// The sum is recorded only when the bytes hashed hold the build ID note
// read before: a file that changed in between records nothing.
func TestNoteWindow(t *testing.T) {
	stream := []byte("0123456789abcdefghij")
	for _, chunk := range []int{1, 3, 7, 20} {
		for want, ok := range map[string]bool{"789ab": true, "789aX": false} {
			w := &noteWindow{off: 7, want: []byte(want)}
			for i := 0; i < len(stream); i += chunk {
				_, _ = w.Write(stream[i:min(i+chunk, len(stream))])
			}
			assert.Equal(t, ok, w.matched(), "chunk %d, want %q", chunk, want)
		}
	}
	short := &noteWindow{off: 7, want: []byte("789ab")}
	_, _ = short.Write(stream[:9])
	assert.False(t, short.matched(), "a stream that ends inside the note")
}
