package release

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// reportAt is res as a push to d reports it.
func reportAt(res *product.Result, d destination) *Report {
	return newReport(res, tail{dest: d, where: InRegistry})
}

// fakeResult is a release of images named names, each tagged tags, with
// made-up digests (the dotenv file reads no index).
func fakeResult(names []string, tags ...string) *product.Result {
	res := &product.Result{}
	for i, n := range names {
		res.Images = append(res.Images, product.Image{Name: n, Tags: tags,
			Digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064x", i+1)}})
	}
	return res
}

func TestDotenvRegistry(t *testing.T) {
	res := fakeResult([]string{"gitlab-runner-helper", "gitlab-runner"}, "v17.10.0", "latest")
	d, err := publish.NewRegistry(publish.ByPrefix{Prefix: "registry.example.com/group"}, nil, imageref.Options{}, nil)
	require.NoError(t, err)
	data, err := reportAt(res, d).Dotenv("--dotenv x")
	require.NoError(t, err)
	assert.Equal(t, `GITLAB_RUNNER_HELPER_IMAGE=registry.example.com/group/gitlab-runner-helper@sha256:`+fmt.Sprintf("%064x", 1)+`
GITLAB_RUNNER_HELPER_TAG=registry.example.com/group/gitlab-runner-helper:v17.10.0
GITLAB_RUNNER_IMAGE=registry.example.com/group/gitlab-runner@sha256:`+fmt.Sprintf("%064x", 2)+`
GITLAB_RUNNER_TAG=registry.example.com/group/gitlab-runner:v17.10.0
`, string(data))
}

func TestDotenvTagChoice(t *testing.T) {
	assert.Equal(t, "r/a:v1", PreferredTag([]string{"r/a:latest", "r/a:v1"}), "latest only when it is the only tag")
	assert.Equal(t, "r/a:latest", PreferredTag([]string{"r/a:latest"}))
	assert.Equal(t, "", PreferredTag(nil))
	assert.Equal(t, "GITLAB_RUNNER_HELPER", envName("gitlab-runner-helper"))
	assert.Equal(t, "A_B_C_9", envName("a.b/c_9"))
}

// TestDotenvLimits: a file GitLab would reject is never written; the
// message names the count and the way out.
func TestDotenvLimits(t *testing.T) {
	d, err := publish.NewRegistry(publish.ByPrefix{Prefix: "registry.example.com/group"}, nil, imageref.Options{}, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "build.env")

	var names []string
	for i := range 11 {
		names = append(names, fmt.Sprintf("image%d", i))
	}
	err = reportAt(fakeResult(names, "v1"), d).writeDotenv(path)
	require.Error(t, err)
	assert.Equal(t, "--dotenv "+path+": 11 images need 22 variables, more than the 20 GitLab accepts in one dotenv report; select at most 10 images with --image, or write one report per job", err.Error())
	assert.NoFileExists(t, path)

	// Ten tagged images are twenty variables: accepted.
	require.NoError(t, reportAt(fakeResult(names[:10], "v1"), d).writeDotenv(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 20, strings.Count(string(data), "\n"))
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		assert.Regexp(t, `^[A-Z0-9_]+=[^\s"'#]+$`, line)
	}

	// Eleven untagged images are eleven variables: accepted.
	require.NoError(t, reportAt(fakeResult(names), d).writeDotenv(path))

	err = reportAt(fakeResult([]string{"a-b", "a.b"}, "v1"), d).writeDotenv(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "images a-b and a.b both give A_B_IMAGE")

	// A value GitLab would split is refused, and the file stays as it was.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	err = reportAt(fakeResult([]string{"a"}, "v1 x"), d).writeDotenv(path)
	require.Error(t, err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
}
