package manifest

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// Base layers read from a registry stay *remote.MountableLayer through
// Image (Layers, LayerByDigest, LayerByDiffID), so a push to another
// repository of the same registry mounts them instead of uploading them
// (the end-to-end suite checks the mount against docker-registry).
func TestBaseLayersStayMountable(t *testing.T) {
	ref, err := name.ParseReference(testkit.Registry(t) + "/base/tiny:1")
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, dockerBase(t, "amd64")))
	base, err := remote.Image(ref)
	require.NoError(t, err)

	img, err := Image(Spec{Base: base, Platform: v1.Platform{OS: "linux", Architecture: "amd64"},
		Steps: []Step{{Layer: newLayer(t)}}, Created: v1.Time{Time: epoch}})
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 3)
	for i, l := range layers[:2] {
		ml, ok := l.(*remote.MountableLayer)
		require.True(t, ok, "base layer %d is %T", i, l)
		assert.Equal(t, "base/tiny", ml.Reference.Context().RepositoryStr())
		mt, err := l.MediaType()
		require.NoError(t, err)
		assert.Equal(t, "application/vnd.oci.image.layer.v1.tar+gzip", string(mt), "described as OCI")
		d, _ := l.Digest()
		byDigest, err := img.LayerByDigest(d)
		require.NoError(t, err)
		assert.IsType(t, &remote.MountableLayer{}, byDigest)
		diffID, _ := l.DiffID()
		byDiffID, err := img.LayerByDiffID(diffID)
		require.NoError(t, err)
		assert.IsType(t, &remote.MountableLayer{}, byDiffID)
	}
	_, isMountable := layers[2].(*remote.MountableLayer)
	assert.False(t, isMountable, "our own layer has nowhere to be mounted from")
}
