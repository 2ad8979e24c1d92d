package manifest

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// An image on a Windows base keeps the base's foreign layer as an OCI
// non-distributable descriptor with its URLs (never reading it), and the
// index lists the entry with the os.version of its config.
func TestImageOnWindowsBase(t *testing.T) {
	var reads testkit.ForeignReads
	base := testkit.WindowsBase(t, "10.0.20348.2340", &reads)
	baseLayers, err := base.Layers()
	require.NoError(t, err)
	foreignDigest, err := baseLayers[0].Digest()
	require.NoError(t, err)

	asked := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}
	img, err := Image(Spec{Base: base, Platform: asked, Steps: []Step{{Layer: newLayer(t), History: v1.History{CreatedBy: "COPY helper.exe"}}}, Created: v1.Time{Time: epoch}})
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	require.Len(t, m.Layers, 3)
	assert.Equal(t, types.OCIRestrictedLayer, m.Layers[0].MediaType)
	assert.Equal(t, foreignDigest, m.Layers[0].Digest)
	assert.Equal(t, []string{testkit.ForeignURL(foreignDigest)}, m.Layers[0].URLs)
	assert.Empty(t, m.Layers[1].URLs)
	assert.Equal(t, types.OCIUncompressedLayer, m.Layers[1].MediaType)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "10.0.20348.2340", cf.OSVersion, "the entry's os.version is the base's")
	assert.Equal(t, "windows", cf.OS)

	idx, err := Index([]Entry{{Platform: asked, Image: img}}, nil)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	assert.Equal(t, "10.0.20348.2340", im.Manifests[0].Platform.OSVersion)
	assert.Zero(t, reads.Load(), "the foreign layer was never read")

	_, err = Index([]Entry{{Platform: v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763"}, Image: img}}, nil)
	assert.ErrorContains(t, err, "entry for windows/amd64:10.0.17763: its config says os.version 10.0.20348.2340, another Windows build")

	onLinux, err := Image(Spec{Base: dockerBase(t, "amd64"), Platform: asked, Created: v1.Time{Time: epoch}})
	require.NoError(t, err)
	_, err = Index([]Entry{{Platform: asked, Image: onLinux}}, nil)
	assert.ErrorContains(t, err, "entry for windows/amd64:10.0.20348: its config has no os.version")
}
