package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

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
	desc, err := remote.Head(testkit.Ref(t, host+"/group/hello:v1.2.3"))
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
