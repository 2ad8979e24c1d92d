package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/release"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// exampleArgs pin everything git would otherwise say, so the bundled
// example builds the same images on every machine.
var exampleArgs = []string{"--version", "v17.10.0", "--revision", "0123456789abcdef0123456789abcdef01234567",
	"--branch", "17-10-stable", "--source", "https://gitlab.example.com/group/gitlab-runner"}

// exampleDir is examples/gitlab-runner, wherever the test runs.
func exampleDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "gitlab-runner")
}

// golden compares got with the file path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	name := filepath.Base(path)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run %s -update to write it", t.Name())
	assert.Equal(t, string(want), got, "testdata/%s (go test -run %s -update rewrites it)", name, t.Name())
}

// masker replaces what differs between Go versions and machines with
// names: each digest the metadata file lists by what it is the digest of
// ("<gitlab-runner-helper linux/arm64>"), each compressed size by "<size>",
// and the given strings (temporary paths, the registry's port).
type masker struct {
	repl []string
}

func newMasker(m release.Metadata, literal ...string) *masker {
	k := &masker{repl: literal}
	for _, img := range m.Images {
		k.repl = append(k.repl, img.Digest, "<"+img.Name+" index>")
		for _, p := range img.Platforms {
			k.repl = append(k.repl, p.Digest, "<"+img.Name+" "+p.Platform+">")
			if at := p.Attestations; at != nil {
				k.repl = append(k.repl, at.SBOM, "<"+img.Name+" "+p.Platform+" sbom>",
					at.Provenance, "<"+img.Name+" "+p.Platform+" provenance>")
				if at.Manifest != "" {
					k.repl = append(k.repl, at.Manifest, "<"+img.Name+" "+p.Platform+" attestation manifest>")
				}
			}
		}
	}
	return k
}

var (
	sizeColumn   = regexp.MustCompile(`  [0-9]+(\.[0-9])? (B|KiB|MiB|GiB)  `)
	compressedJS = regexp.MustCompile(`"compressedSize": [0-9]+`)
	anyDigest    = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
)

func (k *masker) mask(t *testing.T, s string) string {
	t.Helper()
	s = strings.NewReplacer(k.repl...).Replace(s)
	s = sizeColumn.ReplaceAllString(s, "  <size>  ")
	s = compressedJS.ReplaceAllString(s, `"compressedSize": <size>`)
	assert.NotRegexp(t, anyDigest, s, "every digest printed is one the metadata file lists")
	return s
}

// exampleMetadata reads a --metadata-file and checks each size against
// what the layout or registry holds: compressedSize is the manifest's
// config and layers, the summary shows it in human units.
func exampleMetadata(t *testing.T, path, stdout string, manifestOf func(digest string) (int64, int64)) release.Metadata {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m release.Metadata
	require.NoError(t, json.Unmarshal(data, &m))
	require.Equal(t, 1, m.SchemaVersion)
	require.Len(t, m.Images, 2)
	for _, img := range m.Images {
		require.Len(t, img.Platforms, 5)
		for _, p := range img.Platforms {
			size, compressed := manifestOf(p.Digest)
			assert.Equal(t, size, p.Size, "%s %s manifest size", img.Name, p.Platform)
			assert.Equal(t, compressed, p.CompressedSize, "%s %s compressed size", img.Name, p.Platform)
			assert.Regexp(t, regexp.QuoteMeta(p.Platform)+` +`+regexp.QuoteMeta(p.Digest)+`  +`+regexp.QuoteMeta(progress.Size(compressed))+"  ", stdout)
		}
	}
	return m
}

// TestExampleOutputsGolden builds the bundled example into a layout, then
// pushes it to a registry, and holds the summary, the release.Metadata file and
// the dotenv file of each to golden files. The push publishes the very
// digests the build wrote (same inputs, same digests).
func TestExampleOutputsGolden(t *testing.T) {
	testdata, err := filepath.Abs("testdata")
	require.NoError(t, err)
	t.Chdir(exampleDir(t))
	tmp := t.TempDir()
	out := filepath.Join(tmp, "demo")
	files := func(kind string) (meta, env string) {
		return filepath.Join(tmp, kind+".json"), filepath.Join(tmp, kind+".env")
	}

	buildMeta, buildEnv := files("build")
	code, stdout, stderr := run(t, baseEnv(), append([]string{"build", "--output", "oci:" + out,
		"--metadata-file", buildMeta, "--dotenv", buildEnv}, exampleArgs...)...)
	require.Equal(t, 0, code, stderr)
	lp, err := layout.FromPath(out)
	require.NoError(t, err)
	fromLayout := func(digest string) (int64, int64) {
		rc, err := lp.Blob(mustHash(t, digest))
		require.NoError(t, err)
		defer rc.Close()
		raw, err := io.ReadAll(rc)
		require.NoError(t, err)
		return sizes(t, raw)
	}
	bm := exampleMetadata(t, buildMeta, stdout, fromLayout)
	k := newMasker(bm, tmp, "TMP")
	golden(t, filepath.Join(testdata, "example-build.summary.golden"), k.mask(t, stdout))
	golden(t, filepath.Join(testdata, "example-build.metadata.golden"), k.mask(t, readFile(t, buildMeta)))
	golden(t, filepath.Join(testdata, "example-build.dotenv.golden"), k.mask(t, readFile(t, buildEnv)))
	// The dotenv's pinned reference is one verify reads.
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, buildEnv)), "\n") {
		if key, ref, _ := strings.Cut(line, "="); strings.HasSuffix(key, "_IMAGE") {
			code, _, stderr := run(t, baseEnv(), "verify", "--platforms", "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x", ref)
			assert.Equal(t, 0, code, "verify %s: %s", ref, stderr)
		}
	}

	host, _ := startRegistry(t)
	pushMeta, pushEnv := files("push")
	code, stdout, stderr = run(t, baseEnv(), append([]string{"push", "--repo", host + "/group",
		"--metadata-file", pushMeta, "--dotenv", pushEnv}, exampleArgs...)...)
	require.Equal(t, 0, code, stderr)
	fromRegistry := func(digest string) (int64, int64) {
		desc, err := remote.Get(testkit.Ref(t, host+"/group/gitlab-runner-helper@"+digest))
		if err != nil {
			desc, err = remote.Get(testkit.Ref(t, host+"/group/gitlab-runner@"+digest))
		}
		require.NoError(t, err)
		return sizes(t, desc.Manifest)
	}
	pm := exampleMetadata(t, pushMeta, stdout, fromRegistry)
	for i := range bm.Images {
		assert.Equal(t, bm.Images[i].Digest, pm.Images[i].Digest, "build and push of the same inputs give the same index")
	}
	k = newMasker(pm, host, "registry.example.com")
	golden(t, filepath.Join(testdata, "example-push.summary.golden"), k.mask(t, stdout))
	golden(t, filepath.Join(testdata, "example-push.metadata.golden"), k.mask(t, readFile(t, pushMeta)))
	golden(t, filepath.Join(testdata, "example-push.dotenv.golden"), k.mask(t, readFile(t, pushEnv)))
}

// sizes are a manifest's own size and its config's and layers' sizes
// summed, read from its bytes.
func sizes(t *testing.T, raw []byte) (int64, int64) {
	t.Helper()
	var m struct {
		Config struct{ Size int64 }
		Layers []struct{ Size int64 }
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	compressed := m.Config.Size
	for _, l := range m.Layers {
		compressed += l.Size
	}
	return int64(len(raw)), compressed
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func mustHash(t *testing.T, s string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(s)
	require.NoError(t, err)
	return h
}
