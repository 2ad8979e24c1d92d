package imageref

import (
	"errors"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

func parsePlatform(t *testing.T, s string) v1.Platform {
	t.Helper()
	p, err := platform.Parse(s)
	require.NoError(t, err)
	return p
}

// A Windows platform picks the base entry of its build, from an index that
// also lists Linux entries; a build the base lacks, a Linux-only base and
// a config of another build are each an error naming both sides.
func TestWindowsImageFor(t *testing.T) {
	var reads testkit.ForeignReads
	idx := testkit.WindowsIndex(t, &reads, []string{"10.0.17763.5830", "10.0.20348.2340"}, v1.Platform{OS: "linux", Architecture: "amd64"})
	a := &Artifact{Ref: mustParse(t, "oci:/bases/windows"), Index: idx}
	ps, err := a.Platforms()
	require.NoError(t, err)
	assert.Equal(t, "linux/amd64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340", platform.FormatList(ps))

	for _, build := range []string{"10.0.17763", "10.0.20348"} {
		img, d, err := a.ImageFor(parsePlatform(t, "windows/amd64:"+build))
		require.NoError(t, err, build)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		b, _ := platform.OSBuild(cf.OSVersion)
		assert.Equal(t, build, b)
		got, err := img.Digest()
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	_, _, err = a.ImageFor(parsePlatform(t, "windows/amd64"))
	assert.ErrorContains(t, err, "offers windows/amd64 for several Windows builds (windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340); name one per entry, e.g. windows/amd64:10.0.17763")

	_, _, err = a.ImageFor(parsePlatform(t, "windows/amd64:10.0.26100"))
	var missing *MissingPlatformError
	require.True(t, errors.As(err, &missing), "%v", err)
	assert.ErrorContains(t, err, "has no windows/amd64:10.0.26100 (it offers: linux/amd64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340); a Windows entry needs a Windows base with that build")

	linux := &Artifact{Ref: mustParse(t, "oci:/bases/debian"), Index: testkit.Index(t, 64, 1, v1.Platform{OS: "linux", Architecture: "amd64"})}
	_, _, err = linux.ImageFor(parsePlatform(t, "windows/amd64:10.0.20348"))
	assert.ErrorContains(t, err, "base oci:/bases/debian has no windows/amd64:10.0.20348 (it offers: linux/amd64); a Windows entry needs a Windows base")

	// One image, no index: its config decides.
	single := &Artifact{Ref: mustParse(t, "oci:/bases/nano"), Image: testkit.WindowsBase(t, "10.0.20348.2340", &reads)}
	_, _, err = single.ImageFor(parsePlatform(t, "windows/amd64"))
	require.NoError(t, err)
	_, _, err = single.ImageFor(parsePlatform(t, "windows/amd64:10.0.17763"))
	assert.ErrorContains(t, err, "has no windows/amd64:10.0.17763 (it offers: windows/amd64:10.0.20348.2340)")

	// An index entry whose config names another build is refused.
	liar := testkit.WindowsBase(t, "10.0.17763.5830", &reads)
	listed := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2340"}
	bad := &Artifact{Ref: mustParse(t, "oci:/bases/liar"), Index: mutate.AppendManifests(testkit.Index(t, 64, 1), mutate.IndexAddendum{Add: liar, Descriptor: v1.Descriptor{Platform: &listed}})}
	_, _, err = bad.ImageFor(parsePlatform(t, "windows/amd64:10.0.20348"))
	assert.ErrorContains(t, err, "the manifest listed for windows/amd64:10.0.20348.2340 has a config for windows/amd64:10.0.17763.5830")
	assert.Zero(t, reads.Load())
}
