package verify

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// bombSize is what the bomb layer decompresses to: one executable file of
// ELF magic and zeros. Compressed it is about a thousandth of that.
const bombSize = 256 << 20

// bombLayer writes a gzip layer into dir holding one executable file,
// usr/bin/bomb, of bombSize bytes: the ELF magic, then zeros. It is a
// series of gzip members (one gzip stream, as readers see it), the 1 MiB
// of zeros compressed once and repeated, so making it costs little.
func bombLayer(t testing.TB, dir string) v1.Layer {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		require.NoError(t, err)
		_, err = zw.Write(b)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		return buf.Bytes()
	}
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "usr/bin/bomb", Mode: 0o755, Size: bombSize, Format: tar.FormatPAX}))
	head.Write([]byte{0x7f, 'E', 'L', 'F'})
	const chunk = 1 << 20
	zeros := make([]byte, chunk)
	head.Write(zeros[:chunk-4])
	var end bytes.Buffer
	end.Write(make([]byte, 1024)) // bombSize is a multiple of 512; two zero blocks end the archive

	p := filepath.Join(dir, "bomb.tar.gz")
	f, err := os.Create(p)
	require.NoError(t, err)
	_, err = f.Write(member(head.Bytes()))
	require.NoError(t, err)
	z := member(zeros)
	for range bombSize/chunk - 1 {
		_, err = f.Write(z)
		require.NoError(t, err)
	}
	_, err = f.Write(member(end.Bytes()))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	l, err := tarball.LayerFromFile(p, tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}

// countingLayer counts the bytes read from its uncompressed stream.
type countingLayer struct {
	v1.Layer
	n *int64
}

func (l countingLayer) Uncompressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Uncompressed()
	if err != nil {
		return nil, err
	}
	return countingReader{rc, l.n}, nil
}

type countingReader struct {
	io.ReadCloser
	n *int64
}

func (r countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	*r.n += int64(n)
	return n, err
}

// A layer that decompresses to far more than the limit is read up to the
// limit and no further: what is decompressed, spooled to disk and held in
// memory stays within it, and the error says which limit.
func TestScanStopsAtTheLimit(t *testing.T) {
	const limit = 16 << 20
	var read int64
	l := countingLayer{bombLayer(t, t.TempDir()), &read}
	spool := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := scan(context.Background(), []v1.Layer{l}, &readBudget{maxBytes: limit, maxEntries: 100}, nil, []bool{true}, spool,
		func(string, rootfs.Source, *tar.Header, *os.File) error {
			t.Error("the bomb was handed on whole")
			return nil
		})
	runtime.ReadMemStats(&after)
	var big *layersTooBigError
	require.ErrorAs(t, err, &big)
	assert.EqualError(t, big, "the image's layers decompress to more than the 16.0 MiB allowed (--max-layers-size)")
	// The tar reader asks for at most 32 KiB past what it was handed.
	assert.LessOrEqual(t, read, int64(limit+64<<10), "decompressed no further than the limit")
	t.Logf("decompressed %d of %d bytes; allocated %d KiB", read, bombSize, (after.TotalAlloc-before.TotalAlloc)>>10)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(limit), "nothing near the layer's size was held in memory")
	ents, err := os.ReadDir(spool)
	require.NoError(t, err)
	assert.Empty(t, ents, "the partial spool file is removed")
}

// verify without --run: a platform whose layers decompress to more than
// the limit, or hold more entries, fails its arch check with the limit;
// the others are checked; nothing is left in TempDir.
func TestVerifyBoundedWithoutRun(t *testing.T) {
	bomb := bombLayer(t, t.TempDir())
	var many bytes.Buffer
	tw := tar.NewWriter(&many)
	for i := range 2000 {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "f" + strconv.Itoa(i), Mode: 0o644, Format: tar.FormatPAX}))
	}
	require.NoError(t, tw.Close())
	manyEntries, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(many.Bytes())), nil },
		tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)

	image := func(p v1.Platform, l v1.Layer) v1.Image {
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), l)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = p.OS, p.Architecture
		img, err = mutate.ConfigFile(img, cf)
		require.NoError(t, err)
		return img
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: image(amd64, bomb), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: image(arm64, manyEntries), Descriptor: v1.Descriptor{Platform: &arm64}})
	tmp := t.TempDir()
	for _, contract := range []string{ContractNone, ContractHelper} {
		r, err := Index(context.Background(), roundTrip(t, idx), Options{TempDir: tmp, Contract: contract, LayersMaxBytes: 16 << 20, LayersMaxEntries: 1000})
		require.NoError(t, err, "a finding, not an error")
		var got []string
		for _, f := range r.Findings() {
			got = append(got, f.Platform+" "+f.Check+": "+f.Reason)
		}
		assert.Equal(t, []string{
			"linux/amd64 arch: the image's layers decompress to more than the 16.0 MiB allowed (--max-layers-size): the image's files were not checked",
			"linux/arm64 arch: the image's layers hold more than 1000 files, directories and links, the most allowed: the image's files were not checked",
		}, got, "contract %q", contract)
		ents, err := os.ReadDir(tmp)
		require.NoError(t, err)
		assert.Empty(t, ents)
	}
}
