package build

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/pecheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// mixedBase pushes a base index with linux/amd64, linux/arm64 and two
// Windows builds (foreign layers whose URL nothing serves) to an
// in-process registry whose requests log records.
func mixedBase(t *testing.T, reads *testkit.ForeignReads) (ref string, log *testkit.RequestLog, foreign []string) {
	t.Helper()
	log = &testkit.RequestLog{}
	host := testkit.Registry(t, log.Wrap)
	idx := testkit.WindowsIndex(t, reads, []string{"10.0.17763.5830", "10.0.20348.2340"},
		v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	ref = host + "/base/mixed:1"
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, idx)) // leaves the foreign blobs out, as a registry mirror of Microsoft's images does
	for _, d := range testkit.ForeignLayers(t, idx) {
		foreign = append(foreign, d.Hex)
	}
	log.Take()
	return ref, log, foreign
}

// One config-free build for linux/amd64, linux/arm64 and two Windows
// releases gives one index: Linux entries first, then Windows by build,
// each with its base's os.version; every binary has its format and
// machine; no foreign blob is asked for; the digests are reproducible.
func TestBuildMixedLinuxWindows(t *testing.T) {
	var reads testkit.ForeignReads
	base, log, foreign := mixedBase(t, &reads)
	require.Len(t, foreign, 2)
	build := func() *product.Image {
		plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base, Flags: []string{"-trimpath"},
			Platforms: platforms(t, "windows/amd64:10.0.20348,linux/amd64,windows/amd64:10.0.17763,linux/arm64")})
		require.NoError(t, err)
		res, err := Build(context.Background(), plan, options(t))
		require.NoError(t, err)
		return &res.Images[0]
	}
	img := build()
	im, err := img.Index.IndexManifest()
	require.NoError(t, err)
	var listed []v1.Platform
	for _, d := range im.Manifests {
		listed = append(listed, *d.Platform)
	}
	assert.Equal(t, "linux/amd64,linux/arm64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340", platform.FormatList(listed))

	for _, d := range im.Manifests {
		child, err := img.Index.Image(d.Digest)
		require.NoError(t, err)
		layers, err := child.Layers()
		require.NoError(t, err)
		own := layers[len(layers)-1]
		if d.Platform.OS == "linux" {
			// validate reads every layer, which a Windows entry's foreign one forbids.
			require.NoError(t, validate.Image(child))
			require.NoError(t, elfcheck.CheckFile(extract(t, own, "usr/bin/hello"), *d.Platform))
			continue
		}
		cf, err := child.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, d.Platform.OSVersion, cf.OSVersion)
		assert.Equal(t, []string{`C:\hello\hello.exe`}, cf.Config.Entrypoint)
		assert.Empty(t, cf.Config.Cmd)
		assert.Equal(t, []string{`PATH=C:\hello;C:\Windows\system32;C:\Windows`}, cf.Config.Env)
		m, err := child.Manifest()
		require.NoError(t, err)
		require.Len(t, m.Layers, 3, "foreign, the base's real layer, ours")
		assert.False(t, m.Layers[0].MediaType.IsDistributable())
		assert.Equal(t, []string{testkit.ForeignURL(m.Layers[0].Digest)}, m.Layers[0].URLs)
		require.NoError(t, pecheck.CheckFile(extract(t, own, "Files/hello/hello.exe"), *d.Platform))
	}
	for _, r := range log.Take() {
		for _, f := range foreign {
			assert.False(t, strings.Contains(r, f), "the foreign blob was asked for: %s", r)
		}
	}
	assert.Zero(t, reads.Load())

	again := build()
	assert.Equal(t, img.Digest, again.Digest, "a second build gives the same index")
}

// Windows entries are attested as Linux ones (an SBOM naming the binary
// and its modules, a provenance), reproducibly, without reading the
// foreign layers.
func TestBuildMixedAttestations(t *testing.T) {
	var reads testkit.ForeignReads
	base, _, _ := mixedBase(t, &reads)
	build := func() *product.Image {
		plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base, Flags: []string{"-trimpath"},
			Platforms: platforms(t, "linux/amd64,windows/amd64:10.0.17763,windows/amd64:10.0.20348")})
		require.NoError(t, err)
		res, err := Build(context.Background(), plan, attestOptions(t, product.AttestIndex))
		require.NoError(t, err)
		return &res.Images[0]
	}
	first, second := build(), build()
	assert.Equal(t, first.Digest, second.Digest, "index and attestations are reproducible")
	require.Len(t, first.Platforms, 3)
	for k, p := range first.Platforms {
		require.NotNil(t, p.Attestation, platform.Format(p.Platform))
		assert.Equal(t, p.Attestation.Digests, second.Platforms[k].Attestation.Digests, platform.Format(p.Platform))
		assert.Contains(t, string(p.Attestation.SPDX), "example.com/hello", "the SBOM names the binary's module: %s", platform.Format(p.Platform))
	}
	im, err := first.Index.IndexManifest()
	require.NoError(t, err)
	assert.Len(t, im.Manifests, 6, "three platform images, three attestation manifests")
	assert.Zero(t, reads.Load())
}

// Each impossible Windows entry is a usage error before anything compiles.
func TestWindowsBuildRefusals(t *testing.T) {
	var reads testkit.ForeignReads
	base, _, _ := mixedBase(t, &reads)
	_, linuxBase := busyboxLike(t, "linux/amd64")
	tests := []struct{ name, base, platforms, want string }{
		{"build the base lacks", base, "windows/amd64:10.0.26100", "has no windows/amd64:10.0.26100 (it offers: linux/amd64,linux/arm64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340); a Windows entry needs a Windows base"},
		{"linux base", linuxBase, "linux/amd64,windows/amd64:10.0.20348", "has no windows/amd64:10.0.20348 (it offers: linux/amd64); a Windows entry needs a Windows base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: tt.base, Platforms: platforms(t, tt.platforms)})
			require.NoError(t, err)
			_, err = Build(context.Background(), plan, options(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var input *InputError
			assert.ErrorAs(t, err, &input, "a usage error (exit 2)")
		})
	}
}

// Without --platforms a config-free build takes the base's Linux
// platforms only: Windows entries are asked for by build.
func TestAllPlatformsLeavesWindowsOut(t *testing.T) {
	var reads testkit.ForeignReads
	base, _, _ := mixedBase(t, &reads)
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base})
	require.NoError(t, err)
	res, err := Build(context.Background(), plan, options(t))
	require.NoError(t, err)
	var got []v1.Platform
	for _, p := range res.Images[0].Platforms {
		got = append(got, p.Platform)
	}
	assert.Equal(t, "linux/amd64,linux/arm64", platform.FormatList(got))
	assert.Zero(t, reads.Load())
}

// recipeMixed writes a recipe into a module with two binaries: image
// tools/hello has a Linux entry from its Dockerfile and a Windows entry per
// build of bases (build -> base); other names a Linux image only.
func recipeMixed(t *testing.T, platforms string, bases map[string]string) *recipe.Plan {
	t.Helper()
	dir := module(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "other"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "other", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nARG TARGETARCH\nCOPY --from=bin hello-linux-${TARGETARCH} /usr/bin/hello\nENTRYPOINT [\"/usr/bin/hello\"]\n"), 0o644))
	var b strings.Builder
	for build, ref := range bases {
		fmt.Fprintf(&b, "        %q: %s\n", build, ref)
	}
	yaml := "binaries:\n  - main: ./cmd/hello\n    output: hello-{{.OS}}-{{.Arch}}\n  - main: ./cmd/other\n    output: other-{{.OS}}-{{.Arch}}\n" +
		"images:\n  - name: tools/hello\n    dockerfile: Dockerfile\n    contexts: {bin: \"binaries:\"}\n    platforms: [" + platforms + "]\n" +
		"    windows:\n      binary: ./cmd/hello\n      bases:\n" + b.String()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helperbuild.yaml"), []byte(yaml), 0o644))
	cfg, err := recipe.Load(filepath.Join(dir, "helperbuild.yaml"))
	require.NoError(t, err)
	plan, err := cfg.Plan(recipe.Vars{Version: "v1.2.3"}, recipe.Selection{})
	require.NoError(t, err)
	return plan
}

// A recipe's Windows entries are built as config-free ones are: the named
// binary as C:\NAME\NAME.exe on the base of each build, the Dockerfile not
// applied (and logged so); the Linux entry comes from the Dockerfile;
// Windows platforms compile only the binary their entries hold.
func TestBuildRecipeWindows(t *testing.T) {
	var reads testkit.ForeignReads
	base, log, foreign := mixedBase(t, &reads)
	plan := recipeMixed(t, "linux/amd64, windows/amd64:10.0.17763, windows/amd64:10.0.20348",
		map[string]string{"10.0.17763": base, "10.0.20348": base})
	var logs bytes.Buffer
	opts := attestOptions(t, product.AttestIndex)
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	res, err := Build(context.Background(), plan, opts)
	require.NoError(t, err)
	img := res.Images[0]
	for _, p := range img.Platforms {
		require.NotNil(t, p.Attestation, "attested: %s", platform.Format(p.Platform))
	}
	im, err := img.Index.IndexManifest()
	require.NoError(t, err)
	var listed []v1.Platform
	for _, d := range im.Manifests[:3] {
		listed = append(listed, *d.Platform)
	}
	assert.Equal(t, "linux/amd64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340", platform.FormatList(listed))
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS == "unknown" {
			continue
		}
		child, err := img.Index.Image(d.Digest)
		require.NoError(t, err)
		layers, err := child.Layers()
		require.NoError(t, err)
		cf, err := child.ConfigFile()
		require.NoError(t, err)
		own := layers[len(layers)-1]
		if d.Platform.OS == "linux" {
			assert.Equal(t, []string{"/usr/bin/hello"}, cf.Config.Entrypoint, "the Dockerfile's")
			require.NoError(t, elfcheck.CheckFile(extract(t, own, "usr/bin/hello"), *d.Platform))
			continue
		}
		assert.Equal(t, d.Platform.OSVersion, cf.OSVersion)
		assert.Equal(t, []string{`C:\hello\hello.exe`}, cf.Config.Entrypoint)
		assert.Equal(t, []string{`PATH=C:\hello;C:\Windows\system32;C:\Windows`}, cf.Config.Env)
		require.NoError(t, pecheck.CheckFile(extract(t, own, "Files/hello/hello.exe"), *d.Platform))
	}
	assert.Equal(t, 2, strings.Count(logs.String(), `msg="Windows entry: the Dockerfile is not applied" image=tools/hello`), "%s", logs.String())

	// Laid out exactly as config-free mode lays them out: the same Windows
	// entries, digest for digest.
	free, err := recipe.PackagePlan(recipe.Package{Dir: plan.Dir, Main: "./cmd/hello", Base: base,
		Platforms: platforms(t, "windows/amd64:10.0.17763,windows/amd64:10.0.20348")})
	require.NoError(t, err)
	freeRes, err := Build(context.Background(), free, attestOptions(t, product.AttestIndex))
	require.NoError(t, err)
	fm, err := freeRes.Images[0].Index.IndexManifest()
	require.NoError(t, err)
	assert.Equal(t, fm.Manifests[0].Digest, im.Manifests[1].Digest, "10.0.17763")
	assert.Equal(t, fm.Manifests[1].Digest, im.Manifests[2].Digest, "10.0.20348")
	assert.Contains(t, logs.String(), "hello-windows-amd64-10.0.17763", "each Windows entry compiles its binary")
	assert.NotContains(t, logs.String(), "other-windows", "./cmd/other is not compiled for Windows")
	for _, r := range log.Take() {
		for _, f := range foreign {
			assert.False(t, strings.Contains(r, f), "the foreign blob was asked for: %s", r)
		}
	}
	assert.Zero(t, reads.Load())
}

// A recipe's Windows base that is not Windows, or lacks the build, is a
// usage error before anything compiles.
func TestBuildRecipeWindowsRefusals(t *testing.T) {
	var reads testkit.ForeignReads
	base, _, _ := mixedBase(t, &reads)
	_, linuxBase := busyboxLike(t, "linux/amd64")
	for _, tt := range []struct{ name, platforms, base, want string }{
		{"linux base", "windows/amd64:10.0.20348", linuxBase, "image tools/hello: base " + linuxBase + " has no windows/amd64:10.0.20348 (it offers: linux/amd64); a Windows entry needs a Windows base"},
		{"build the base lacks", "windows/amd64:10.0.26100", base, "has no windows/amd64:10.0.26100 (it offers: linux/amd64,linux/arm64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := recipeMixed(t, tt.platforms, map[string]string{strings.TrimPrefix(tt.platforms, "windows/amd64:"): tt.base})
			var logs bytes.Buffer
			opts := options(t)
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			_, err := Build(context.Background(), plan, opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var input *InputError
			assert.ErrorAs(t, err, &input, "a usage error (exit 2)")
			assert.NotContains(t, logs.String(), "compiled", "refused before compiling")
		})
	}
}
