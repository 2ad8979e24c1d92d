package layer

import (
	"crypto/sha256"
	"hash"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompressorDeterministic checks what the compressed digest relies on:
// fresh writers give the same bytes for the same input, however the input is
// split into writes (short reads from a file system must not matter).
func TestCompressorDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 1<<20)
	for i := range data {
		if i%4096 < 1024 { // part random, part repetitive
			data[i] = byte(rng.Uint32())
		} else {
			data[i] = byte(i / 4096)
		}
	}
	compress := func(level int, split func(rest int) int) []byte {
		out := countingHash{h: sha256.New()}
		gz, err := newGzipWriter(&out, level)
		require.NoError(t, err)
		for rest := data; len(rest) > 0; {
			n := min(split(len(rest)), len(rest))
			_, err := gz.Write(rest[:n])
			require.NoError(t, err)
			rest = rest[n:]
		}
		require.NoError(t, gz.Close())
		return out.h.Sum(nil)
	}
	for _, level := range []int{1, DefaultLevel, 9} {
		want := compress(level, func(int) int { return copyBufferSize })
		assert.Equal(t, want, compress(level, func(int) int { return copyBufferSize }), "level %d, same writes", level)
		assert.Equal(t, want, compress(level, func(int) int { return 1 + rng.IntN(200000) }), "level %d, random writes", level)
		assert.Equal(t, want, compress(level, func(rest int) int { return rest }), "level %d, one write", level)
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
