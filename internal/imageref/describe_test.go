package imageref

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDescribe: media type, digest and size of the bytes, nothing else.
func TestDescribe(t *testing.T) {
	l := static.NewLayer([]byte("{}"), types.OCIConfigJSON)
	d, err := Describe(l)
	require.NoError(t, err)
	assert.Equal(t, v1.Descriptor{MediaType: types.OCIConfigJSON, Size: 2,
		Digest: v1.Hash{Algorithm: "sha256", Hex: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}}, d)
}
