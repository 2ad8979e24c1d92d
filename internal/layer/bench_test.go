package layer

import (
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// benchInput is a real Go binary, the typical content of a helper layer.
const benchInput = "/usr/local/go/bin/go"

// Run: go test -run XXX -bench . -benchmem ./internal/layer

func benchEntries(b *testing.B) ([]rootfs.Entry, int64) {
	fi, err := os.Stat(benchInput)
	if err != nil {
		b.Skipf("benchmark input: %v", err)
	}
	return []rootfs.Entry{{Path: "/usr/bin/go", Kind: rootfs.File, Source: benchInput, Mode: 0o755}}, fi.Size()
}

// BenchmarkWrite is the whole hot path: read, tar, hash, gzip, hash, write.
func BenchmarkWrite(b *testing.B) {
	entries, size := benchEntries(b)
	for _, level := range []int{1, 5} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("level=%d/threads=%d", level, threads), func(b *testing.B) {
				dir := b.TempDir()
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					_, err := Write(context.Background(), entries, Options{Dir: dir, Epoch: testEpoch, Level: level, Threads: threads})
					require.NoError(b, err)
				}
			})
		}
	}
}

// BenchmarkTarOnly reads the file and writes the tar stream to nowhere.
func BenchmarkTarOnly(b *testing.B) {
	entries, size := benchEntries(b)
	planned, err := plan(entries)
	require.NoError(b, err)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, newTarWriter(io.Discard, testEpoch, false).writeAll(context.Background(), planned))
	}
}

// BenchmarkSHA256 is one of the two hashes Write computes.
func BenchmarkSHA256(b *testing.B) {
	data := readBenchInput(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h := sha256.New()
		h.Write(data)
		h.Sum(nil)
	}
}

// BenchmarkPlainGzip compresses the same bytes from memory with both
// candidate compressors, reporting the output as a percentage of the input.
// It also fails if a compressor's output changes between runs.
func BenchmarkPlainGzip(b *testing.B) {
	data := readBenchInput(b)
	compressors := []struct {
		name string
		new  func(w io.Writer, level int) (io.WriteCloser, error)
	}{
		{"std", func(w io.Writer, l int) (io.WriteCloser, error) { return stdgzip.NewWriterLevel(w, l) }},
		{"klauspost", func(w io.Writer, l int) (io.WriteCloser, error) { return kgzip.NewWriterLevel(w, l) }},
	}
	for _, level := range []int{1, 3, 5, 6, 9} {
		for _, c := range compressors {
			b.Run(fmt.Sprintf("%s/level=%d", c.name, level), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var out, first countingHash
				for i := 0; b.Loop(); i++ {
					out = countingHash{h: sha256.New()}
					gz, err := c.new(&out, level)
					require.NoError(b, err)
					for chunk := range slices.Chunk(data, copyBufferSize) {
						_, err := gz.Write(chunk)
						require.NoError(b, err)
					}
					require.NoError(b, gz.Close())
					if i == 0 {
						first = out
					}
					require.Equal(b, first.h.Sum(nil), out.h.Sum(nil), "output changed between runs")
				}
				b.ReportMetric(100*float64(out.n)/float64(len(data)), "%size")
			})
		}
	}
}

func readBenchInput(b *testing.B) []byte {
	data, err := os.ReadFile(benchInput) // benchmark input only, not a layer
	if err != nil {
		b.Skipf("benchmark input: %v", err)
	}
	return data
}
