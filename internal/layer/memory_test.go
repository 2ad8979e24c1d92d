package layer

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// sparseFile creates a file of size bytes that is mostly a hole, with 64 KiB
// of random data every 4 MiB, so it is cheap on disk but not trivial to
// compress.
func sparseFile(t testing.TB, dir string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, "sparse")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Truncate(size))
	rng := rand.New(rand.NewPCG(uint64(size), 7))
	chunk := make([]byte, 64<<10)
	for off := int64(0); off+int64(len(chunk)) <= size; off += 4 << 20 {
		for i := range chunk {
			chunk[i] = byte(rng.Uint32())
		}
		_, err := f.WriteAt(chunk, off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	return p
}

// writeAllocated returns the bytes allocated by one Write of a size-byte file.
func writeAllocated(t *testing.T, size int64) uint64 {
	src := sparseFile(t, t.TempDir(), size)
	entries := []rootfs.Entry{{Path: "/big", Kind: rootfs.File, Source: src, Mode: 0o644}}
	opts := Options{Dir: t.TempDir(), Epoch: testEpoch}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l, err := Write(context.Background(), entries, opts)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	n, err := io.Copy(&countingDiscard{}, rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Greater(t, n, size, "the layer holds the whole file")
	return after.TotalAlloc - before.TotalAlloc
}

// TestWriteStreamsInBoundedMemory checks that the bytes allocated by Write
// (TotalAlloc, which counts every allocation, freed or not) are far below the
// file size and do not grow with it: holding the layer or the file in memory
// anywhere would allocate at least its size.
func TestWriteStreamsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 320 MiB of (sparse) input")
	}
	const limit = 8 << 20
	small := writeAllocated(t, 64<<20)
	large := writeAllocated(t, 256<<20)
	t.Logf("allocated: %d KiB for 64 MiB, %d KiB for 256 MiB", small>>10, large>>10)
	assert.Less(t, small, uint64(limit), "64 MiB file")
	assert.Less(t, large, uint64(limit), "256 MiB file")
	assert.Less(t, large, small+1<<20, "allocation grows with file size")
}
