//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/containerd/platforms"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// TestIndexGitLabWindowsTags joins GitLab-style per-variant helper tags made here (x86_64,
// arm64, x86_64-…-servercore1809 and -servercore21H2, each Windows helper on a base whose
// foreign layer nothing serves and the registry never got) in the real registry into one
// tag with index --gitlab-helper: Linux first, then Windows by build; no request names a
// foreign blob; each node kind's selector, containerd's and go-containerregistry's, picks
// its own entry; a second run gives the same digest; a Windows helper labelled linux is
// refused (exit 1) naming both.
func TestIndexGitLabWindowsTags(t *testing.T) {
	s := suiteFor(t)
	proxy := startCountingProxy(t, s.plain)
	var reads testkit.ForeignReads
	write := func(ref string, img v1.Image) {
		r, err := name.ParseReference(ref, name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(r, img)) // leaves the foreign blobs out
	}
	write(s.plain.ref("e2e/gl-helper:x86_64-v17.10.0"), testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "amd64"))
	write(s.plain.ref("e2e/gl-helper:arm64-v17.10.0"), testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "arm64"}, "arm64"))
	var foreign []string
	for _, w := range []struct{ version, ltsc, rel string }{{"10.0.17763.5830", "ltsc2019", "1809"}, {"10.0.20348.2340", "ltsc2022", "21H2"}} {
		base := testkit.WindowsBase(t, w.version, &reads)
		write(s.plain.ref("e2e/servercore:"+w.ltsc), base)
		baseRef := proxy.Host + "/e2e/servercore:" + w.ltsc // read back through the proxy
		write(s.plain.ref("e2e/gl-helper:x86_64-v17.10.0-servercore"+w.rel), testkit.WindowsHelper(t, os.Environ(), base, baseRef, nil))
		write(s.plain.ref("e2e/gl-liar:x86_64-v17.10.0-servercore"+w.rel), testkit.WindowsHelper(t, os.Environ(), base, baseRef, func(cf *v1.ConfigFile) { cf.OS = "linux" }))
		m, err := base.Manifest()
		require.NoError(t, err)
		for _, l := range m.Layers {
			if !l.MediaType.IsDistributable() {
				foreign = append(foreign, l.Digest.Hex)
			}
		}
	}
	require.Len(t, foreign, 2)

	ps := "linux/amd64,linux/arm64,windows/amd64:10.0.17763,windows/amd64:10.0.20348"
	env := s.helperbuildEnv(t)
	res := s.helperbuild(t, t.TempDir(), env, "index", "--tag", proxy.Host+"/e2e/gl-mixed:bad", "--gitlab-helper", proxy.Host+"/e2e/gl-liar",
		"--version", "v17.10.0", "--platforms", "windows/amd64:10.0.20348")
	assert.Equal(t, 1, res.ExitCode, "%s", res)
	assert.Contains(t, res.Stderr, "source "+proxy.Host+"/e2e/gl-liar:x86_64-v17.10.0-servercore21H2: config says linux/amd64, binaries are windows/amd64:10.0.20348.2340")

	join := func() string {
		md := metadataPath(t)
		s.mustHelperbuild(t, t.TempDir(), env, "index", "--tag", proxy.Host+"/e2e/gl-mixed:v17.10.0", "--gitlab-helper", proxy.Host+"/e2e/gl-helper",
			"--version", "v17.10.0", "--platforms", ps, "--metadata-file", md)
		return readMetadata(t, md).image(t, "").Digest
	}
	digest := join()
	assert.Equal(t, digest, join(), "a second run gives the same index")
	assert.Zero(t, reads.Load())
	for _, r := range proxy.all() {
		for _, f := range foreign {
			assert.NotContains(t, r, f, "a foreign blob was asked for")
		}
	}

	ref, err := name.ParseReference(s.plain.ref("e2e/gl-mixed:v17.10.0"), name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	got, err := idx.IndexManifest()
	require.NoError(t, err)
	var listed []string
	for _, d := range got.Manifests {
		if d.Platform != nil && d.Platform.OS != "unknown" {
			listed = append(listed, d.Platform.String())
		}
	}
	assert.Equal(t, []string{"linux/amd64", "linux/arm64", "windows/amd64:10.0.17763.5830", "windows/amd64:10.0.20348.2340"}, listed)
	for _, n := range []struct {
		node specs.Platform // what the node's containerd asks for
		want string
	}{
		{specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.5830"}, "windows/amd64:10.0.17763.5830"},
		{specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2340"}, "windows/amd64:10.0.20348.2340"},
		{specs.Platform{OS: "linux", Architecture: "arm64"}, "linux/arm64"},
	} {
		m := platforms.NewMatcher(n.node)
		var picked []v1.Descriptor
		for _, d := range got.Manifests {
			if d.Platform != nil && m.Match(specs.Platform{OS: d.Platform.OS, Architecture: d.Platform.Architecture, Variant: d.Platform.Variant, OSVersion: d.Platform.OSVersion}) {
				picked = append(picked, d)
			}
		}
		require.Len(t, picked, 1, "containerd for %v", n.node)
		assert.Equal(t, n.want, picked[0].Platform.String())
		img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: n.node.OS, Architecture: n.node.Architecture, OSVersion: n.node.OSVersion}))
		require.NoError(t, err, "go-containerregistry for %v", n.node)
		d, err := img.Digest()
		require.NoError(t, err)
		assert.Equal(t, picked[0].Digest, d, "go-containerregistry and containerd pick one entry")
		if !strings.HasPrefix(n.want, "windows") {
			continue
		}
		layers, err := img.Layers()
		require.NoError(t, err)
		mt, err := layers[0].MediaType()
		require.NoError(t, err)
		assert.False(t, mt.IsDistributable(), "the base's foreign layer stays a reference")
	}
}
