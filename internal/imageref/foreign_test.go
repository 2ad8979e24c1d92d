package imageref

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// A foreign layer read through a run's blob store is refused before any
// fetch: its bytes live on servers helperbuild does not ask.
func TestForeignLayerIsNotFetched(t *testing.T) {
	var reads testkit.ForeignReads
	a := &Artifact{Image: testkit.WindowsBase(t, "10.0.20348.2340", &reads)}
	a.through(NewBlobs(t.TempDir()), "")
	layers, err := a.Image.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2)

	foreign, err := Foreign(layers[0])
	require.NoError(t, err)
	assert.True(t, foreign)
	_, err = layers[0].Compressed()
	var fe *ForeignLayerError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.ErrorContains(t, err, "is a foreign layer (application/vnd.docker.image.rootfs.foreign.diff.tar.gzip)")
	_, err = layers[0].Uncompressed()
	assert.True(t, errors.As(err, &fe), "%v", err)
	assert.Zero(t, reads.Load())

	real, err := Foreign(layers[1])
	require.NoError(t, err)
	assert.False(t, real)
	rc, err := layers[1].Compressed()
	require.NoError(t, err, "the small real layer is read as any other")
	require.NoError(t, rc.Close())
}
