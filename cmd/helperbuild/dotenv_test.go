package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/release"
)

// fakeResult is a release of images named names, each tagged tags, with
// made-up digests (the dotenv file reads no index).
func fakeResult(names []string, tags ...string) *release.Result {
	res := &release.Result{}
	for i, n := range names {
		res.Images = append(res.Images, release.Image{Name: n, Tags: tags,
			Digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064x", i+1)}})
	}
	return res
}

func TestDotenvRegistry(t *testing.T) {
	res := fakeResult([]string{"gitlab-runner-helper", "gitlab-runner"}, "v17.10.0", "latest")
	d, err := publish.NewRegistry(t.Context(), publish.ByPrefix{Prefix: "registry.example.com/group"}, nil, imageref.Options{}, nil)
	require.NoError(t, err)
	data, err := dotenv(res, d, "--dotenv x")
	require.NoError(t, err)
	assert.Equal(t, `GITLAB_RUNNER_HELPER_IMAGE=registry.example.com/group/gitlab-runner-helper@sha256:`+fmt.Sprintf("%064x", 1)+`
GITLAB_RUNNER_HELPER_TAG=registry.example.com/group/gitlab-runner-helper:v17.10.0
GITLAB_RUNNER_IMAGE=registry.example.com/group/gitlab-runner@sha256:`+fmt.Sprintf("%064x", 2)+`
GITLAB_RUNNER_TAG=registry.example.com/group/gitlab-runner:v17.10.0
`, string(data))
}

func TestDotenvTagChoice(t *testing.T) {
	assert.Equal(t, "r/a:v1", dotenvTag([]string{"r/a:latest", "r/a:v1"}), "latest only when it is the only tag")
	assert.Equal(t, "r/a:latest", dotenvTag([]string{"r/a:latest"}))
	assert.Equal(t, "", dotenvTag(nil))
	assert.Equal(t, "GITLAB_RUNNER_HELPER", envName("gitlab-runner-helper"))
	assert.Equal(t, "A_B_C_9", envName("a.b/c_9"))
}

// TestDotenvLimits: a file GitLab would reject is never written; the
// message names the count and the way out.
func TestDotenvLimits(t *testing.T) {
	d, err := publish.NewRegistry(t.Context(), publish.ByPrefix{Prefix: "registry.example.com/group"}, nil, imageref.Options{}, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "build.env")

	var names []string
	for i := range 11 {
		names = append(names, fmt.Sprintf("image%d", i))
	}
	err = writeDotenv(path, fakeResult(names, "v1"), d)
	require.Error(t, err)
	assert.Equal(t, "--dotenv "+path+": 11 images need 22 variables, more than the 20 GitLab accepts in one dotenv report; select at most 10 images with --image, or write one report per job", err.Error())
	assert.NoFileExists(t, path)

	// Ten tagged images are twenty variables: accepted.
	require.NoError(t, writeDotenv(path, fakeResult(names[:10], "v1"), d))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 20, strings.Count(string(data), "\n"))
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		assert.Regexp(t, `^[A-Z0-9_]+=[^\s"'#]+$`, line)
	}

	// Eleven untagged images are eleven variables: accepted.
	require.NoError(t, writeDotenv(path, fakeResult(names), d))

	err = writeDotenv(path, fakeResult([]string{"a-b", "a.b"}, "v1"), d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "images a-b and a.b both give A_B_IMAGE")

	// A value GitLab would split is refused, and the file stays as it was.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	err = writeDotenv(path, fakeResult([]string{"a"}, "v1 x"), d)
	require.Error(t, err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
}

// TestDotenvPushAndEarlyFailure: push --dotenv writes the digests it
// pushed; a recipe with more images than a dotenv report can carry fails
// before anything compiles, and writes nothing.
func TestDotenvPushAndEarlyFailure(t *testing.T) {
	host, _ := startRegistry(t)
	helloModule(t)
	env := filepath.Join(t.TempDir(), "push.env")
	code, stdout, stderr := run(t, baseEnv(), "push", "--platforms", "linux/amd64,linux/arm64", "--base", "scratch",
		"--tag", host+"/group/hello:v1.2.3", "--tag", host+"/group/hello:latest", "--dotenv", env, "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	desc, err := remote.Head(mustRef(t, host+"/group/hello:v1.2.3"))
	require.NoError(t, err)
	data, err := os.ReadFile(env)
	require.NoError(t, err)
	assert.Equal(t, "HELLO_IMAGE="+host+"/group/hello@"+desc.Digest.String()+"\nHELLO_TAG="+host+"/group/hello:v1.2.3\n", string(data))
	assert.Contains(t, stdout, desc.Digest.String())

	dir := relModule(t)
	var images strings.Builder
	for i := range 11 {
		fmt.Fprintf(&images, "  - name: app%d\n    dockerfile: Dockerfile\n    contexts: {binary_dir: \"binaries:\"}\n    tags: [v1]\n", i)
	}
	relWrite(t, dir, map[string]string{
		"helperbuild.yaml": strings.SplitAfter(recipeYAML, "images:\n")[0] + images.String(),
		"Dockerfile":       okDockerfile,
	})
	t.Chdir(dir)
	r, code, stderr := prepared(t, []string{"build", "--version", "v1", "--output", "oci:" + filepath.Join(t.TempDir(), "o"), "--dotenv", env})
	assert.Nil(t, r, "nothing compiled")
	assert.Equal(t, 2, code, stderr)
	assert.Equal(t, "helperbuild: --dotenv "+env+": 11 images need 22 variables, more than the 20 GitLab accepts in one dotenv report; select at most 10 images with --image, or write one report per job\n", stderr)
	data2, err := os.ReadFile(env)
	require.NoError(t, err)
	assert.Equal(t, data, data2, "the old file stays")
}
