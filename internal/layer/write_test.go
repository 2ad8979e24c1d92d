package layer

import (
	"archive/tar"
	stdgzip "compress/gzip"
	"context"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

var testEpoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// goldenDiffID is the sha256 of the tar stream of goldenEntries at
// testEpoch. It changes only if the tar encoding changes, which breaks
// reproducibility of every image: update it deliberately, never casually.
const goldenDiffID = "sha256:6f4b7b9beccc0c86b266ce9f188f3f9350c25364d5b5c6fc1d81843f061da8b2"

// goldenEntries writes the files it needs into a temp dir and returns a
// small layer: a setuid file, a dir and a file owned by 1000:1000, a
// symlink, a sticky dir; /usr, /usr/bin and /etc are implicit.
func goldenEntries(t testing.TB) []rootfs.Entry {
	src := t.TempDir()
	hello := writeFile(t, src, "hello", "hello, layer\n")
	config := writeFile(t, src, "config", "key=value\n")
	return []rootfs.Entry{
		{Path: "/usr/bin/hello", Kind: rootfs.File, Source: hello, Mode: 0o755 | fs.ModeSetuid},
		{Path: "/etc/app", Kind: rootfs.Dir, Mode: 0o750, UID: 1000, GID: 1000},
		{Path: "/etc/app/config", Kind: rootfs.File, Source: config, Mode: 0o640, UID: 1000, GID: 1000},
		{Path: "/usr/bin/hi", Kind: rootfs.Symlink, Linkname: "hello"},
		{Path: "/tmp", Kind: rootfs.Dir, Mode: 0o777 | fs.ModeSticky},
	}
}

func writeFile(t testing.TB, dir, name, content string) string {
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestWriteGoldenDiffID(t *testing.T) {
	l, err := Write(context.Background(), goldenEntries(t), Options{Dir: t.TempDir(), Epoch: testEpoch})
	require.NoError(t, err)
	diffID, err := l.DiffID()
	require.NoError(t, err)
	assert.Equal(t, goldenDiffID, diffID.String())
}

func TestWriteReadBack(t *testing.T) {
	dir := t.TempDir()
	l, err := Write(context.Background(), goldenEntries(t), Options{Dir: dir, Epoch: testEpoch})
	require.NoError(t, err)

	type item struct {
		Name     string
		Type     byte
		Mode     int64
		UID, GID int
		Linkname string
		Content  string
	}
	want := []item{
		{Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "etc/app/", Type: tar.TypeDir, Mode: 0o750, UID: 1000, GID: 1000},
		{Name: "etc/app/config", Type: tar.TypeReg, Mode: 0o640, UID: 1000, GID: 1000, Content: "key=value\n"},
		{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
		{Name: "usr/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/bin/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/bin/hello", Type: tar.TypeReg, Mode: 0o4755, Content: "hello, layer\n"},
		{Name: "usr/bin/hi", Type: tar.TypeSymlink, Mode: 0o777, Linkname: "hello"},
	}

	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []item
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		content, err := io.ReadAll(tr)
		require.NoError(t, err)
		got = append(got, item{hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid, hdr.Linkname, string(content)})
		assert.Equal(t, tar.FormatUSTAR, hdr.Format, hdr.Name)
		assert.True(t, hdr.ModTime.Equal(testEpoch), "%s mtime %v", hdr.Name, hdr.ModTime)
		assert.True(t, hdr.AccessTime.IsZero() && hdr.ChangeTime.IsZero(), hdr.Name)
		assert.Empty(t, hdr.Uname+hdr.Gname, hdr.Name)
		assert.Empty(t, hdr.PAXRecords, hdr.Name)
	}
	assert.Equal(t, want, got)

	digest, err := l.Digest()
	require.NoError(t, err)
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 1, "only the blob is left in Dir")
	assert.Equal(t, BlobPath(dir, digest), filepath.Join(dir, files[0].Name()))

	f, err := os.Open(BlobPath(dir, digest))
	require.NoError(t, err)
	defer f.Close()
	gz, err := stdgzip.NewReader(f)
	require.NoError(t, err)
	assert.Equal(t, stdgzip.Header{OS: 255}, gz.Header, "gzip header has no name, comment or time")
	mt, err := l.MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCILayer, mt)
}

func TestWriteLongNamesUsePAX(t *testing.T) {
	long := "/opt/" + strings.Repeat("d", 120) + "/" + strings.Repeat("f", 120)
	l, err := Write(context.Background(), []rootfs.Entry{
		{Path: long, Kind: rootfs.Symlink, Linkname: "/" + strings.Repeat("t", 150)},
	}, Options{Dir: t.TempDir(), Epoch: testEpoch})
	require.NoError(t, err)
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, hdr.Name)
		if hdr.Typeflag == tar.TypeSymlink {
			assert.Equal(t, "/"+strings.Repeat("t", 150), hdr.Linkname)
			assert.Equal(t, tar.FormatPAX, hdr.Format)
		}
	}
	assert.Equal(t, []string{"opt/", "opt/" + strings.Repeat("d", 120) + "/", long[1:]}, names)
}

func TestWriteDeterministic(t *testing.T) {
	entries := goldenEntries(t)
	write := func(dir string, in []rootfs.Entry) (v1.Hash, []byte) {
		l, err := Write(context.Background(), in, Options{Dir: dir, Epoch: testEpoch})
		require.NoError(t, err)
		d, err := l.Digest()
		require.NoError(t, err)
		blob, err := os.ReadFile(BlobPath(dir, d))
		require.NoError(t, err)
		return d, blob
	}
	dir := t.TempDir()
	first, firstBlob := write(dir, entries)
	again, againBlob := write(dir, entries)
	assert.Equal(t, first, again, "written twice into the same Dir")
	assert.Equal(t, firstBlob, againBlob)

	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := append([]rootfs.Entry(nil), entries...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		d, blob := write(t.TempDir(), shuffled)
		assert.Equal(t, first, d, "order %v", shuffled)
		assert.Equal(t, firstBlob, blob)
	}

	// The epoch is part of the output: a different one must change the digest.
	l, err := Write(context.Background(), entries, Options{Dir: t.TempDir(), Epoch: testEpoch.Add(time.Second)})
	require.NoError(t, err)
	other, err := l.Digest()
	require.NoError(t, err)
	assert.NotEqual(t, first, other)
}

func TestWriteValidatesAndReopens(t *testing.T) {
	dir := t.TempDir()
	for _, level := range []int{0, 1, 9} {
		l, err := Write(context.Background(), goldenEntries(t), Options{Dir: dir, Epoch: testEpoch, Level: level})
		require.NoError(t, err)
		require.NoError(t, validate.Layer(l), "level %d", level)
		require.NoError(t, validate.Layer(l), "level %d, read a second time", level)

		digest, err := l.Digest()
		require.NoError(t, err)
		diffID, err := l.DiffID()
		require.NoError(t, err)
		size, err := l.Size()
		require.NoError(t, err)
		opened, err := Open(BlobPath(dir, digest), digest, diffID, size)
		require.NoError(t, err)
		require.NoError(t, validate.Layer(opened))

		_, err = Open(BlobPath(dir, digest), digest, diffID, size+1)
		assert.ErrorContains(t, err, "want a regular file of")
	}
	_, err := Open(filepath.Join(dir, "missing"), v1.Hash{}, v1.Hash{}, 1)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestWriteRejects(t *testing.T) {
	src := t.TempDir()
	file := writeFile(t, src, "f", "x")
	notDir := writeFile(t, src, "not-a-dir", "x")
	tests := []struct {
		name    string
		entries []rootfs.Entry
		opts    func(dir string) Options
		want    string
	}{
		{"duplicate", []rootfs.Entry{{Path: "/a", Kind: rootfs.Dir}, {Path: "/a/", Kind: rootfs.Dir}}, nil, "duplicate path /a"},
		{"relative", []rootfs.Entry{{Path: "a/b", Kind: rootfs.Dir}}, nil, `"a/b": path must be absolute`},
		{"dotdot", []rootfs.Entry{{Path: "/a/../b", Kind: rootfs.Dir}}, nil, `"/a/../b": path must not contain ".."`},
		{"missing source", []rootfs.Entry{{Path: "/f", Kind: rootfs.File, Source: filepath.Join(src, "nope")}}, nil, "layer entry /f: open"},
		{"source is a directory", []rootfs.Entry{{Path: "/f", Kind: rootfs.File, Source: src}}, nil, "is not a regular file"},
		{"bad level", []rootfs.Entry{{Path: "/f", Kind: rootfs.File, Source: file}}, func(dir string) Options { return Options{Dir: dir, Level: 10} }, "gzip level 10"},
		{"missing dir", nil, func(dir string) Options { return Options{Dir: filepath.Join(dir, "nope")} }, "layer directory"},
		{"dir is a file", nil, func(string) Options { return Options{Dir: notDir} }, "is not a directory"},
		{"epoch before 1970", nil, func(dir string) Options { return Options{Dir: dir, Epoch: time.Unix(-1, 0)} }, "before 1970"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Dir: dir, Epoch: testEpoch}
			if tt.opts != nil {
				opts = tt.opts(dir)
			}
			_, err := Write(context.Background(), tt.entries, opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assertEmptyDir(t, dir)
		})
	}
}

// TestWriteDetectsGrowth uses a /proc file: stat says 0 bytes, read gives more.
func TestWriteDetectsGrowth(t *testing.T) {
	const src = "/proc/self/status"
	if _, err := os.Stat(src); err != nil {
		t.Skip("needs Linux /proc")
	}
	dir := t.TempDir()
	_, err := Write(context.Background(), []rootfs.Entry{{Path: "/status", Kind: rootfs.File, Source: src, Mode: 0o644}}, Options{Dir: dir})
	assert.ErrorContains(t, err, "grew beyond 0 bytes while being read")
	assertEmptyDir(t, dir)
}

func TestCopyNDetectsShrink(t *testing.T) {
	var out countingDiscard
	n, err := copyN(context.Background(), &out, io.LimitReader(zeroReader{}, 3), 5, make([]byte, 2))
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	assert.Equal(t, int64(3), out.n)
}

func TestWriteCancelled(t *testing.T) {
	src := t.TempDir()
	big := sparseFile(t, src, 8<<20)
	entries := []rootfs.Entry{
		{Path: "/a", Kind: rootfs.Dir},
		{Path: "/b", Kind: rootfs.Dir},
		{Path: "/c/big", Kind: rootfs.File, Source: big, Mode: 0o644},
	}
	// Count the ctx.Err calls of an uncancelled Write, then cancel at
	// chosen points of it.
	probe := &countdownCtx{Context: context.Background(), live: math.MaxInt}
	_, err := Write(probe, entries, Options{Dir: t.TempDir(), Epoch: testEpoch})
	require.NoError(t, err)
	total := probe.calls
	require.Greater(t, total, 4+(8<<20)/copyBufferSize/2, "ctx is checked while copying")

	tests := []struct {
		name string
		live int // ctx.Err calls that report nil before cancellation
	}{
		{"before start", 0},
		{"between entries", 2},
		{"while copying a file", total / 2},
		{"after the last entry", total - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := Write(&countdownCtx{Context: context.Background(), live: tt.live}, entries, Options{Dir: dir, Epoch: testEpoch})
			assert.ErrorIs(t, err, context.Canceled)
			assert.Nil(t, l)
			assertEmptyDir(t, dir)
		})
	}
}

// countdownCtx reports cancellation from its live+1st call to Err on, which
// makes "cancelled in the middle" deterministic without timing.
type countdownCtx struct {
	context.Context
	live  int
	calls int
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls > c.live {
		return context.Canceled
	}
	return nil
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		return // the test removed or never had the directory
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	assert.Empty(t, names, "files left behind in %s", dir)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
