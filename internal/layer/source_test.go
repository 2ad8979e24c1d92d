package layer

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A layer Write returned streams its tar again from its sources: the same
// bytes the blob decompresses to, hashing to the DiffID.
func TestUncompressedFromSources(t *testing.T) {
	dir := t.TempDir()
	l, err := Write(context.Background(), goldenEntries(t), Options{Dir: dir, Epoch: testEpoch})
	require.NoError(t, err)
	require.NotNil(t, l.(*fileLayer).source)

	rc, err := l.Uncompressed()
	require.NoError(t, err)
	regenerated, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())

	digest, _ := l.Digest()
	diffID, _ := l.DiffID()
	size, _ := l.Size()
	opened, err := Open(BlobPath(dir, digest), digest, diffID, size)
	require.NoError(t, err)
	require.Nil(t, opened.(*fileLayer).source, "a reopened layer decompresses its blob")
	rc, err = opened.Uncompressed()
	require.NoError(t, err)
	decompressed, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())

	assert.True(t, bytes.Equal(decompressed, regenerated), "regenerated stream differs from the blob's contents")
	sum := sha256.Sum256(regenerated)
	assert.Equal(t, diffID.Hex, hex.EncodeToString(sum[:]))
	assert.Equal(t, goldenDiffID, diffID.String())
}

// A source file changed after Write (same size, so the tar writer cannot
// tell) makes a reader that walks the whole tar fail, not end cleanly on a
// stream that is not the blob's.
func TestUncompressedDetectsChangedSource(t *testing.T) {
	entries := goldenEntries(t)
	l, err := Write(context.Background(), entries, Options{Dir: t.TempDir(), Epoch: testEpoch})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(entries[0].Source, []byte("HELLO, LAYER\n"), 0o644))

	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		_, err = tr.Next()
		if err != nil {
			break
		}
		_, err = io.Copy(io.Discard, tr)
		if err != nil {
			break
		}
	}
	require.Error(t, err)
	assert.NotErrorIs(t, err, io.EOF)
	assert.ErrorContains(t, err, "source files changed after it was written")
}

// Closing the reader early ends the writer: reading after Close fails and
// Close does not block.
func TestUncompressedEarlyClose(t *testing.T) {
	l, err := Write(context.Background(), goldenEntries(t), Options{Dir: t.TempDir(), Epoch: testEpoch})
	require.NoError(t, err)
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	_, err = io.ReadFull(rc, make([]byte, 100))
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	_, err = rc.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.ErrClosedPipe)
}
