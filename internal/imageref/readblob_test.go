package imageref

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadBlob: a blob of the limit is read whole, one byte more is
// refused, not cut.
func TestReadBlob(t *testing.T) {
	l := static.NewLayer([]byte("0123456789"), types.OCIConfigJSON)
	b, err := ReadBlob(l, 10)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(b))
	_, err = ReadBlob(l, 9)
	assert.EqualError(t, err, "larger than 9 bytes")
}
