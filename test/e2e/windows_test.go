//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/containerd/platforms"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/pecheck"
)

// TestMixedLinuxWindowsPush pushes, config-free, one tag for linux/amd64, linux/arm64 and
// two Windows releases to the real registry, on a base index made here whose Windows
// entries carry os.version and a foreign layer at a URL nothing serves (the registry never
// got that blob). No request names a foreign blob; each node kind's selector, go-
// containerregistry's and containerd's, picks its own entry; every binary has its format
// and machine; a second push gives the same digest; `verify --attestations` passes for
// every entry. Then a recipe (helperbuild.yaml with windows.bases) pushes the same Windows
// entries, digest for digest, beside its Dockerfile's Linux entry.
func TestMixedLinuxWindowsPush(t *testing.T) {
	s := suiteFor(t)
	var reads testkit.ForeignReads
	base := testkit.WindowsIndex(t, &reads, []string{"10.0.17763.5830", "10.0.20348.2340"},
		v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	baseRef, err := name.ParseReference(s.plain.ref("e2e/windows-base:1"), name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(baseRef, base)) // leaves the foreign blobs out
	var foreign []string
	for _, d := range testkit.ForeignLayers(t, base) {
		foreign = append(foreign, d.Hex)
	}
	require.Len(t, foreign, 2)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "hello"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "hello", "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644))
	// One proxy for both pushes: the base's name (its host) is in the index's annotations.
	proxy := startCountingProxy(t, s.plain)
	push := func() (string, []string) {
		before := len(proxy.all())
		md := metadataPath(t)
		s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "push",
			"--platforms", "linux/amd64,linux/arm64,windows/amd64:10.0.17763,windows/amd64:10.0.20348",
			"--base", proxy.Host+"/e2e/windows-base:1", "--tag", proxy.Host+"/e2e/mixed:v1", "--metadata-file", md, "./cmd/hello")
		return readMetadata(t, md).image(t, "").Digest, proxy.all()[before:]
	}
	digest, requests := push()
	for _, r := range requests {
		for _, f := range foreign {
			assert.NotContains(t, r, f, "a foreign blob was asked for")
		}
	}
	assert.Zero(t, reads.Load())

	ref, err := name.ParseReference(s.plain.ref("e2e/mixed:v1"), name.Insecure)
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

	nodes := []struct {
		node specs.Platform // what the node's containerd asks for
		want string
	}{
		{specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.5830"}, "windows/amd64:10.0.17763.5830"},
		{specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2340"}, "windows/amd64:10.0.20348.2340"},
		{specs.Platform{OS: "linux", Architecture: "arm64"}, "linux/arm64"},
	}
	for _, n := range nodes {
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

		layers, err := img.Layers()
		require.NoError(t, err)
		own := layers[len(layers)-1]
		p := *picked[0].Platform
		if p.OS == "windows" {
			require.NoError(t, pecheck.CheckFile(extractPath(t, own, "Files/hello/hello.exe"), p))
		} else {
			require.NoError(t, elfcheck.CheckFile(extractPath(t, own, "usr/bin/hello"), p))
		}
	}

	again, requests := push()
	assert.Equal(t, digest, again, "a second push gives the same index")
	for _, r := range requests {
		for _, f := range foreign {
			assert.NotContains(t, r, f, "a foreign blob was asked for on the second push")
		}
	}

	// The Windows entries' attestations verify as the Linux entries' do.
	res := s.helperbuild(t, dir, s.helperbuildEnv(t), "verify", "--attestations", s.plain.ref("e2e/mixed:v1"))
	assert.Zero(t, res.ExitCode, "verify:\n%s", res)
	assert.NotContains(t, res.Stdout, "not checked yet")

	// Recipe mode: helperbuild.yaml names a Windows base per build. The
	// Linux entry comes from its Dockerfile; the Windows entries are the
	// config-free push's, digest for digest.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nARG TARGETARCH\nCOPY --from=bin hello-linux-${TARGETARCH} /usr/bin/hello\n"), 0o644))
	winBase := proxy.Host + "/e2e/windows-base:1"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helperbuild.yaml"), []byte(`platforms: [linux/amd64, "windows/amd64:10.0.17763", "windows/amd64:10.0.20348"]
binaries:
  - main: ./cmd/hello
    output: hello-{{.OS}}-{{.Arch}}
images:
  - name: hello
    dockerfile: Dockerfile
    contexts: {bin: "binaries:"}
    tags: [v1]
    windows:
      bases:
        "10.0.17763": `+winBase+`
        "10.0.20348": `+winBase+`
`), 0o644))
	before := len(proxy.all())
	s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "push", "--config", "helperbuild.yaml", "--repo", proxy.Host+"/e2e/recipe")
	for _, r := range proxy.all()[before:] {
		for _, f := range foreign {
			assert.NotContains(t, r, f, "a foreign blob was asked for by the recipe's push")
		}
	}
	rref, err := name.ParseReference(s.plain.ref("e2e/recipe/hello:v1"), name.Insecure)
	require.NoError(t, err)
	ridx, err := remote.Index(rref)
	require.NoError(t, err)
	rgot, err := ridx.IndexManifest()
	require.NoError(t, err)
	byPlatform := func(im *v1.IndexManifest) map[string]v1.Hash {
		out := map[string]v1.Hash{}
		for _, d := range im.Manifests {
			if d.Platform != nil && d.Platform.OS != "unknown" {
				out[d.Platform.String()] = d.Digest
			}
		}
		return out
	}
	recipeEntries, freeEntries := byPlatform(rgot), byPlatform(got)
	assert.Len(t, recipeEntries, 3)
	require.Contains(t, recipeEntries, "linux/amd64")
	for _, p := range []string{"windows/amd64:10.0.17763.5830", "windows/amd64:10.0.20348.2340"} {
		assert.Equal(t, freeEntries[p], recipeEntries[p], "%s: the recipe's Windows entry is the config-free one", p)
	}
	assert.Zero(t, reads.Load())
}

// extractPath is the path of a copy of the file called name in l.
func extractPath(t *testing.T, l v1.Layer, name string) string {
	t.Helper()
	_, out := testkit.ExtractFile(t, l, name)
	return out
}
