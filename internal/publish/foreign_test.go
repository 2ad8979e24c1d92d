package publish

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// A push of an index with Windows entries on foreign base layers neither
// reads those layers nor asks the registry for them; the pushed index
// serves each Windows build its own entry (go-containerregistry's
// remote.WithPlatform, os.version compared).
func TestPushLeavesForeignLayers(t *testing.T) {
	var reads testkit.ForeignReads
	var reqs testkit.RequestLog
	host := testkit.Registry(t, reqs.Wrap)
	idx := testkit.WindowsIndex(t, &reads, []string{"10.0.17763.5830", "10.0.20348.2340"},
		v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	foreign := testkit.ForeignLayers(t, idx)
	require.Len(t, foreign, 2)

	releaseOnce(t, host, Image{Name: "helper", Index: idx, Tags: []string{"v1"}})
	log := reqs.Take()
	for _, d := range foreign {
		for _, r := range log {
			assert.NotContains(t, r, d.Hex, "the foreign blob was asked for")
		}
	}
	assert.Zero(t, reads.Load(), "the foreign layer was read")
	assert.Positive(t, count(log, "PUT", "/manifests/v1"), strings.Join(log, "\n"))

	ref, err := name.ParseReference(host + "/g/helper:v1")
	require.NoError(t, err)
	for _, v := range []string{"10.0.17763.5830", "10.0.20348.2340"} {
		img, err := remote.Image(ref, remote.WithAuthFromKeychain(authn.NewMultiKeychain()),
			remote.WithPlatform(v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: v}))
		require.NoError(t, err, v)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, v, cf.OSVersion)
	}
}

func TestLayoutLeavesForeignLayers(t *testing.T) {
	var reads testkit.ForeignReads
	idx := testkit.WindowsIndex(t, &reads, []string{"10.0.20348.2340"}, v1.Platform{OS: "linux", Architecture: "amd64"})
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, ToLayout(context.Background(), dir, []Image{{Name: "helper", Index: idx, Tags: []string{"v1"}}}))
	for _, d := range testkit.ForeignLayers(t, idx) {
		_, err := os.Stat(filepath.Join(dir, "blobs", d.Algorithm, d.Hex))
		assert.True(t, os.IsNotExist(err), "foreign blob %s in the layout", d)
	}
	assert.Zero(t, reads.Load())
}
