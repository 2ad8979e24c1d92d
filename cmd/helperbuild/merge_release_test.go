package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/release"
)

// indexDigest is the digest the tag ref points at, and how many of its
// entries are attestations (platform unknown/unknown).
func indexDigest(t *testing.T, ref string) (v1.Hash, int) {
	t.Helper()
	idx, err := remote.Index(testkit.Ref(t, ref))
	require.NoError(t, err)
	d, err := idx.Digest()
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	attestations := 0
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS == "unknown" {
			attestations++
		}
	}
	return d, attestations
}

// fanOut runs one push --by-digest job per platform of jobs, each with
// args and --platforms of its own, and returns the directory of their
// parts.
func fanOut(t *testing.T, env []string, jobs []string, args ...string) string {
	t.Helper()
	parts := t.TempDir()
	for i, p := range jobs {
		jobEnv := append(slices.Clone(env), fmt.Sprintf("CI_JOB_ID=%d", 200+i), "CI_JOB_NAME=build: ["+p+"]")
		a := append([]string{"push", "--by-digest", "--part-file", filepath.Join(parts, fmt.Sprint(200+i)+".json"), "--platforms", p,
			"--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)
		code, _, stderr := run(t, jobEnv, a...)
		require.Equal(t, 0, code, stderr)
	}
	return parts
}

// TestMergeFanOutConfigFree is requirement 3 of the fan-out for a
// config-free release, attestations on (the default): five jobs that
// name the release's platforms with --release-platforms, merged without
// --platforms, give the index digest of one config-free push of the five.
// Without --release-platforms each job's provenance names its platform
// alone, and the merge (told the list) gives another index: the flag is
// what makes them equal. A job's --metadata-file names no index digest.
func TestMergeFanOutConfigFree(t *testing.T) {
	host := testkit.Registry(t)
	helloModule(t)
	env := baseEnv("CI_COMMIT_TAG=v2.0.0", "CI_COMMIT_SHA=0123abc0000000000000000000000000000000ab")
	list := strings.Join(fanOutPlatforms, ",")
	configFree := func(repo string) []string {
		return []string{"--base", "scratch", "--tag", host + "/" + repo + "/hello:v2.0.0", "--ldflags", "-X main.version={{.Version}}"}
	}

	code, _, stderr := run(t, env, append(append([]string{"push", "--platforms", list}, configFree("single")...), "./cmd/hello")...)
	require.Equal(t, 0, code, stderr)
	want, attestations := indexDigest(t, host+"/single/hello:v2.0.0")
	require.Equal(t, len(fanOutPlatforms), attestations, "the single push attests every platform")

	parts := fanOut(t, env, fanOutPlatforms, append(append(configFree("fan"), "--release-platforms", list), "./cmd/hello")...)
	code, _, stderr = run(t, env, "merge", parts)
	require.Equal(t, 0, code, "config-free parts that name the release's platforms need no merge --platforms: %s", stderr)
	got, attestations := indexDigest(t, host+"/fan/hello:v2.0.0")
	assert.Equal(t, len(fanOutPlatforms), attestations, "the merged index carries every job's attestation")
	assert.Equal(t, want, got, "fan-out + merge gives the single config-free push's index digest")
	code, _, stderr = run(t, env, "merge", "--platforms", list, parts)
	assert.Equal(t, 0, code, "merge --platforms that agrees with the parts: %s", stderr)

	// Without the flag, a job's provenance names its own platform only.
	old := fanOut(t, env, fanOutPlatforms, append(configFree("old"), "./cmd/hello")...)
	code, _, stderr = run(t, env, "merge", "--platforms", list, old)
	require.Equal(t, 0, code, stderr)
	other, _ := indexDigest(t, host+"/old/hello:v2.0.0")
	assert.NotEqual(t, want, other, "jobs that do not know the release give another index: the test above can fail")

	// A job's metadata names its platform manifests, not its unpushed index.
	meta := filepath.Join(t.TempDir(), "job.json")
	code, _, stderr = run(t, env, append(append([]string{"push", "--by-digest", "--part-file", filepath.Join(t.TempDir(), "p.json"),
		"--platforms", "linux/arm64", "--release-platforms", list, "--metadata-file", meta}, configFree("fan")...), "./cmd/hello")...)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(meta)
	require.NoError(t, err)
	var m release.Metadata
	require.NoError(t, json.Unmarshal(data, &m))
	require.Len(t, m.Images, 1)
	assert.Empty(t, m.Images[0].Digest, "no index digest: the job pushed no index")
	assert.Equal(t, host+"/fan/hello", m.Images[0].Reference)
	require.Len(t, m.Images[0].Platforms, 1)
	assert.Equal(t, "linux/arm64", m.Images[0].Platforms[0].Platform)
	assert.NotEmpty(t, m.Images[0].Platforms[0].Digest)
}

// TestMergeFanOutSubset: a fan-out of two of the recipe's five platforms,
// each job naming the two with --release-platforms, merges (with or
// without --platforms) into the indexes and tags of one
// `push --platforms` of those two, attestations included.
func TestMergeFanOutSubset(t *testing.T) {
	host := testkit.Registry(t)
	dir := helloModule(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(fanOutDockerfile), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helperbuild.yaml"), []byte(fanOutRecipe), 0o644))
	env := baseEnv("CI_COMMIT_TAG=v2.0.0", "CI_COMMIT_SHA=0123abc0000000000000000000000000000000ab")
	two := []string{"linux/s390x", "linux/arm64"} // not the recipe's order: the index follows the list
	list := strings.Join(two, ",")

	code, _, stderr := run(t, env, "push", "--repo", host+"/single", "--platforms", list)
	require.Equal(t, 0, code, stderr)
	parts := fanOut(t, env, two, "--repo", host+"/fan", "--release-platforms", list)
	for i, args := range [][]string{{"merge", parts}, {"merge", "--platforms", list, "--repo", host + "/fan2", parts}} {
		code, _, stderr = run(t, env, args...)
		require.Equal(t, 0, code, stderr)
		repo := []string{"fan", "fan2"}[i]
		for _, n := range []string{"hello", "hello-runner"} {
			want, attestations := indexDigest(t, host+"/single/"+n+":v2.0.0")
			assert.Equal(t, 2, attestations, "%s: the single push attests both platforms", n)
			got, _ := indexDigest(t, host+"/"+repo+"/"+n+":v2.0.0")
			assert.Equal(t, want, got, "%s, %q: the fan-out of two platforms is push --platforms %s", n, args, list)
			assert.Equal(t, sorted(listTags(t, host+"/single/"+n)), sorted(listTags(t, host+"/"+repo+"/"+n)), n)
		}
	}

	// A job whose platform the release list lacks is refused before it builds.
	code, _, stderr = run(t, env, "push", "--by-digest", "--part-file", filepath.Join(t.TempDir(), "p.json"), "--repo", host+"/fan",
		"--platforms", "linux/amd64", "--release-platforms", list)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--release-platforms "+list+" lacks linux/amd64, which this job builds")
}
