package layer

import (
	"bytes"
	stdgzip "compress/gzip"
	"hash"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompressorDeterministic checks what the compressed digest relies on:
// the same bytes for the same input and level, however the input is split
// into writes (short reads from a file system must not matter) and however
// many goroutines compress it; and any gzip reader gets the input back.
func TestCompressorDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 3*blockSize+12345) // several blocks and a short last one
	for i := range data {
		if i%4096 < 1024 { // part random, part repetitive
			data[i] = byte(rng.Uint32())
		} else {
			data[i] = byte(i / 4096)
		}
	}
	compress := func(input []byte, level, threads int, split func(rest int) int) []byte {
		var out bytes.Buffer
		gz, err := newBlockGzip(&out, level, threads)
		require.NoError(t, err)
		for rest := input; len(rest) > 0; {
			n := min(split(len(rest)), len(rest))
			_, err := gz.Write(rest[:n])
			require.NoError(t, err)
			rest = rest[n:]
		}
		require.NoError(t, gz.Close())
		return out.Bytes()
	}
	for level := 1; level <= 9; level++ {
		data := data
		if level >= 7 {
			data = data[:2*blockSize+12345] // the slow levels: still two dictionaries and a short block
		}
		want := compress(data, level, 1, func(int) int { return copyBufferSize })
		assert.Equal(t, want, compress(data, level, 1, func(int) int { return copyBufferSize }), "level %d, same writes", level)
		assert.Equal(t, want, compress(data, level, 1, func(int) int { return 1 + rng.IntN(200000) }), "level %d, random writes", level)
		for _, threads := range []int{2, 8} {
			assert.Equal(t, want, compress(data, level, threads, func(int) int { return copyBufferSize }), "level %d, %d threads", level, threads)
		}
		// A block refers back into the one before: with a wrong dictionary
		// the stream would still be valid deflate but decompress to other
		// bytes.

		r, err := stdgzip.NewReader(bytes.NewReader(want))
		require.NoError(t, err)
		r.Multistream(false)
		back, err := io.ReadAll(r)
		require.NoError(t, err, "level %d", level)
		assert.True(t, bytes.Equal(data, back), "level %d: decompressed input differs", level)
		assert.Equal(t, stdgzip.Header{OS: 255}, r.Header)
	}
	for _, size := range []int{0, 1, blockSize - 1, blockSize, 2 * blockSize} {
		in := data[:size]
		got := compress(in, 1, 2, func(int) int { return copyBufferSize })
		r, err := stdgzip.NewReader(bytes.NewReader(got))
		require.NoError(t, err)
		back, err := io.ReadAll(r)
		require.NoError(t, err, "%d bytes", size)
		assert.Equal(t, len(in), len(back), "%d bytes", size)
		assert.True(t, bytes.Equal(in, back), "%d bytes", size)
	}
}

// countingHash hashes and counts what is written to it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	return len(p), nil
}
