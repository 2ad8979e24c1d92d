package rootfs

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// A Windows base flattens from its real layers alone: the foreign one is
// never read.
func TestFlattenSkipsForeignLayers(t *testing.T) {
	var reads testkit.ForeignReads
	layers, err := testkit.WindowsBase(t, "10.0.20348.2340", &reads).Layers()
	require.NoError(t, err)
	f, kept, err := FlattenKeeping(context.Background(), layers, func(p string) bool { return p == "/Files/Windows/build.txt" })
	require.NoError(t, err)
	assert.True(t, f.HasDir("/Files/Windows"))
	assert.True(t, f.HasDir("/Hives"))
	require.Len(t, kept, 1)
	for src, data := range kept {
		assert.Equal(t, 1, src.Layer, "the real layer is the second")
		assert.Equal(t, "10.0.20348.2340", string(data))
	}
	assert.Zero(t, reads.Load())
}
