package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/release"
)

const testCommit = "0123456789abcdef0123456789abcdef01234567"

// layoutIndex is the image index of the one image in the layout at dir.
func layoutIndex(t *testing.T, dir string) (v1.Hash, *v1.IndexManifest) {
	t.Helper()
	p, err := layout.FromPath(dir)
	require.NoError(t, err)
	top, err := p.ImageIndex()
	require.NoError(t, err)
	tm, err := top.IndexManifest()
	require.NoError(t, err)
	require.Len(t, tm.Manifests, 1)
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	return tm.Manifests[0].Digest, im
}

// TestAttestationsAreReproducible: the same commit and epoch built in two
// directories give the same index, attestations included; --attest-dir
// and --metadata-file name the same statements.
func TestAttestationsAreReproducible(t *testing.T) {
	var digests []v1.Hash
	var metas []release.Metadata
	for range 2 {
		dir := helloModule(t)
		meta, attDir := filepath.Join(dir, "meta.json"), filepath.Join(dir, "att")
		code, _, stderr := run(t, baseEnv(), "build", "--platforms", "linux/amd64,linux/arm64", "--base", "scratch",
			"--revision", testCommit, "--version", "v1.2.3", "--output", "oci:"+filepath.Join(dir, "oci"),
			"--metadata-file", meta, "--attest-dir", attDir, "./cmd/hello")
		require.Equal(t, 0, code, stderr)
		d, im := layoutIndex(t, filepath.Join(dir, "oci"))
		digests = append(digests, d)
		require.Len(t, im.Manifests, 4, "two images, two attestation manifests")

		var m release.Metadata
		data, err := os.ReadFile(meta)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &m))
		metas = append(metas, m)
		for k, p := range m.Images[0].Platforms {
			require.NotNil(t, p.Attestations, p.Platform)
			assert.Equal(t, im.Manifests[2+k].Digest.String(), p.Attestations.Manifest, "the metadata names the index's attestation manifest")
			sbom, err := os.ReadFile(filepath.Join(attDir, "hello", strings.ReplaceAll(p.Platform, "/", "-"), "sbom.intoto.json"))
			require.NoError(t, err)
			h, _, err := v1.SHA256(strings.NewReader(string(sbom)))
			require.NoError(t, err)
			assert.Equal(t, p.Attestations.SBOM, h.String(), "--attest-dir holds the statement the metadata names")
			assert.FileExists(t, filepath.Join(attDir, "hello", strings.ReplaceAll(p.Platform, "/", "-"), "provenance.intoto.json"))
			assert.FileExists(t, filepath.Join(attDir, "hello", strings.ReplaceAll(p.Platform, "/", "-"), "sbom.spdx.json"))
		}
	}
	assert.Equal(t, digests[0], digests[1], "same commit and epoch, another directory: same index")
	assert.Equal(t, metas[0].Images[0].Platforms, metas[1].Images[0].Platforms)
}

func TestAttestBadInput(t *testing.T) {
	helloModule(t)
	out := "oci:" + filepath.Join(t.TempDir(), "oci")
	for _, tc := range []struct {
		args []string
		want string
		push bool
	}{
		{[]string{"--attest", "sbom"}, `--attest "sbom": want index, referrers or none`, false},
		{[]string{"--provenance", "full"}, `--provenance "full": want min or max`, false},
		{[]string{"--attest", "referrers"}, "--attest referrers: an OCI layout or archive holds no referrers; use --attest index", false},
		{[]string{"--attest", "none", "--attest-dir", t.TempDir()}, "with --attest none: there is nothing to write", false},
		{[]string{"--revision", "cafe"}, `revision "cafe": the provenance names the source by its full commit id`, false},
		{[]string{"--attest", "referrers", "--by-digest", "--part-file", filepath.Join(t.TempDir(), "p.json")}, "--attest referrers with --by-digest: a job writes no tag", true},
	} {
		verb := []string{"build", "--output", out}
		if tc.push {
			verb = []string{"push", "--tag", "localhost:1/x:v1"}
		}
		args := append(append(verb, "--platforms", "linux/amd64", "--base", "scratch"), tc.args...)
		code, _, stderr := run(t, baseEnv(), append(args, "./cmd/hello")...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %s", stderr)
	}
}

// TestPushReferrers: --attest referrers on a registry without the
// referrers API writes the fallback tags; on one that resolves sha256-<hex>
// to the manifest itself (GitLab's) it fails before any tag moves.
func TestPushReferrers(t *testing.T) {
	helloModule(t)
	args := func(host string) []string {
		return []string{"push", "--platforms", "linux/amd64,linux/arm64", "--base", "scratch", "--attest", "referrers",
			"--revision", testCommit, "--tag", host + "/group/hello:v1", "./cmd/hello"}
	}

	host, _ := startRegistry(t)
	code, stdout, stderr := run(t, baseEnv(), args(host)...)
	require.Equal(t, 0, code, stderr)
	repo, err := name.NewRepository(host + "/group/hello")
	require.NoError(t, err)
	idx, err := remote.Index(repo.Tag("v1"))
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2, "referrers stay out of the index:\n%s", stdout)
	for _, m := range im.Manifests {
		refs, err := remote.Referrers(repo.Digest(m.Digest.String()))
		require.NoError(t, err)
		rm, err := refs.IndexManifest()
		require.NoError(t, err)
		assert.Len(t, rm.Manifests, 3, "SBOM and provenance statements, and the SPDX document, listed by the fallback tag")
	}

	gitlab := testkit.Registry(t, testkit.ResolvesDigestTags)
	code, _, stderr = run(t, baseEnv(), args(gitlab)...)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "registry "+gitlab+" resolves the tag sha256-")
	assert.Contains(t, stderr, "--attest index")
	glRepo, err := name.NewRepository(gitlab + "/group/hello")
	require.NoError(t, err)
	_, err = remote.Head(glRepo.Tag("v1"))
	assert.Error(t, err, "no tag moved")
}

// TestVerifyAttestations: verify --attestations passes on what build and
// push attest (in the index, or as referrers behind a fallback tag) and
// fails, one line per platform, on an image without attestations.
func TestVerifyAttestations(t *testing.T) {
	dir := helloModule(t)
	build := func(out string, extra ...string) {
		args := append([]string{"build", "--platforms", "linux/amd64,linux/arm64", "--base", "scratch", "--revision", testCommit,
			"--output", "oci:" + out, "--tag", "v1"}, extra...)
		code, _, stderr := run(t, baseEnv(), append(args, "./cmd/hello")...)
		require.Equal(t, 0, code, stderr)
	}
	with, without := filepath.Join(dir, "with"), filepath.Join(dir, "without")
	build(with)
	build(without, "--attest", "none")

	code, stdout, stderr := run(t, baseEnv(), "verify", "--attestations", "--platforms", "linux/amd64,linux/arm64", "oci:"+with+":v1")
	assert.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	assert.Contains(t, stdout, "ATTESTATIONS")

	code, stdout, _ = run(t, baseEnv(), "verify", "--attestations", "oci:"+without+":v1")
	assert.Equal(t, 1, code, stdout)
	assert.Equal(t, 2, strings.Count(stdout, "no attestations: neither the index nor the registry's referrers hold"), "one line per platform:\n%s", stdout)

	host, _ := startRegistry(t)
	code, _, stderr = run(t, baseEnv(), "push", "--platforms", "linux/amd64,linux/arm64", "--base", "scratch", "--revision", testCommit,
		"--attest", "referrers", "--tag", host+"/group/hello:v1", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = run(t, baseEnv(), "verify", "--attestations", "--platforms", "linux/amd64,linux/arm64", host+"/group/hello:v1")
	assert.Equal(t, 0, code, "%s\n%s", stdout, stderr)
}

// TestProvenanceNamesTheSource: outside CI, in a checkout whose origin is
// a local path and whose HEAD is tagged, built from a subdirectory, the
// provenance names the source by its file: URI at the tag, and the
// package relative to the repository's root with the flags as given.
func TestProvenanceNamesTheSource(t *testing.T) {
	mod := helloModule(t)
	root := filepath.Dir(mod)
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %s: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "x")
	git("tag", "v1.2.3")
	git("remote", "add", "origin", "../upstream.git")
	head := git("rev-parse", "HEAD")
	attDir := filepath.Join(t.TempDir(), "att")
	code, _, stderr := run(t, baseEnv(), "build", "--platforms", "linux/amd64", "--base", "scratch",
		"--output", "oci:"+filepath.Join(t.TempDir(), "oci"), "--attest-dir", attDir,
		"--binary-name", "hi", "--ldflags", "-X main.version={{.Version}}", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(filepath.Join(attDir, "hi", "linux-amd64", "provenance.intoto.json"))
	require.NoError(t, err)
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				ExternalParameters   map[string]any `json:"externalParameters"`
				ResolvedDependencies []struct {
					URI    string            `json:"uri"`
					Digest map[string]string `json:"digest"`
				} `json:"resolvedDependencies"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	require.NoError(t, json.Unmarshal(data, &st))
	bd := st.Predicate.BuildDefinition
	wantSource := "git+file://" + filepath.Join(filepath.Dir(root), "upstream.git") + "@refs/tags/v1.2.3"
	assert.Equal(t, wantSource, bd.ExternalParameters["source"])
	assert.Equal(t, map[string]any{"path": filepath.Base(mod) + "/cmd/hello", "binaryName": "hi",
		"ldflags": "-X main.version={{.Version}}", "base": "scratch"}, bd.ExternalParameters["package"])
	require.NotEmpty(t, bd.ResolvedDependencies)
	assert.Equal(t, wantSource, bd.ResolvedDependencies[0].URI)
	assert.Equal(t, head, bd.ResolvedDependencies[0].Digest["gitCommit"])
}
