package main

import (
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/scaffold"
)

// TestInitBasePlatforms: init --base reads the base's index and refuses,
// writing nothing, when the base lacks platforms the recipe would list
// (a registry base and an oci: layout base); a base with all of them is
// written; an unreachable base names the way out, --offline.
func TestInitBasePlatforms(t *testing.T) {
	testdata, err := filepath.Abs("testdata")
	require.NoError(t, err)
	host := testkit.Registry(t)
	partial := testkit.Index(t, 16, 1, testkit.Platform(t, "linux/amd64"), testkit.Platform(t, "linux/arm64"))
	require.NoError(t, remote.WriteIndex(testkit.Ref(t, host+"/base/partial:1"), partial))
	var five []v1.Platform
	for _, p := range scaffold.Platforms {
		five = append(five, testkit.Platform(t, p))
	}
	all := testkit.Index(t, 16, 1, five...)
	require.NoError(t, remote.WriteIndex(testkit.Ref(t, host+"/base/all:1"), all))
	lay := filepath.Join(t.TempDir(), "bases")
	lp, err := layout.Write(lay, empty.Index)
	require.NoError(t, err)
	require.NoError(t, lp.AppendIndex(partial, layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: "1"})))

	dir := exampleCopy(t, "helperbuild.yaml", ".gitlab-ci.yml")
	t.Chdir(dir)
	code, stdout, stderr := run(t, baseEnv(), "init", "--base", host+"/base/partial:1")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	golden(t, filepath.Join(testdata, "init-base-missing.golden"), mask(stderr, host))
	assert.NoFileExists(t, filepath.Join(dir, "helperbuild.yaml"))
	assert.NoFileExists(t, filepath.Join(dir, ".gitlab-ci.yml"))

	// The same base in an OCI layout: the same refusal.
	code, _, stderr = run(t, baseEnv(), "init", "--base", "oci:"+lay+":1")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "has no linux/arm/v7,linux/ppc64le,linux/s390x of the platforms init writes (it offers: linux/amd64,linux/arm64)")

	// Unreachable: a port nothing listens on.
	const down = "127.0.0.1:1"
	code, _, stderr = run(t, baseEnv(), "init", "--base", down+"/base/partial:1")
	assert.Equal(t, 1, code)
	golden(t, filepath.Join(testdata, "init-base-unreachable.golden"), mask(stderr, down))
	assert.NoFileExists(t, filepath.Join(dir, "helperbuild.yaml"))

	// --offline writes the files without reading the base.
	code, _, stderr = run(t, baseEnv(), "init", "--offline", "--stdout", "--base", down+"/base/partial:1")
	assert.Equal(t, 0, code, stderr)

	code, stdout, stderr = run(t, baseEnv(), "init", "--base", host+"/base/all:1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "wrote helperbuild.yaml and .gitlab-ci.yml")
	_, err = os.Stat(filepath.Join(dir, "helperbuild.yaml"))
	assert.NoError(t, err)
}
