package recipe

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// TestExampleGitLabRunner plans the bundled example module's recipe.
func TestExampleGitLabRunner(t *testing.T) {
	c, err := Load(filepath.Join("..", "..", "examples", "gitlab-runner", "helperbuild.yaml"))
	require.NoError(t, err)
	plan, err := c.Plan(Vars{Version: "17.10.0", Revision: "1a2b3c4d", Branch: "17-10-stable", Date: "2025-03-20T10:11:12Z"}, Selection{})
	require.NoError(t, err)

	exampleDir, err := filepath.Abs(filepath.Join("..", "..", "examples", "gitlab-runner"))
	require.NoError(t, err)
	assert.Equal(t, exampleDir, plan.Dir)
	assert.Equal(t, "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x", platform.FormatList(Values(plan.Platforms)))
	assert.Equal(t, []string{"-trimpath"}, plan.Flags)
	assert.Equal(t, "-s -w"+
		" -X example.com/gitlab-runner/common.VERSION=17.10.0"+
		" -X example.com/gitlab-runner/common.REVISION=1a2b3c4d"+
		" -X example.com/gitlab-runner/common.BRANCH=17-10-stable"+
		" -X example.com/gitlab-runner/common.BUILT=2025-03-20T10:11:12Z", plan.Ldflags)

	require.Len(t, plan.Binaries, 2)
	assert.Equal(t, Binary{Main: "./apps/gitlab-runner-helper"}, plan.Binaries[0])
	assert.Equal(t, map[string]string{
		"linux/amd64":   "gitlab-runner-helper.linux-amd64",
		"linux/arm64":   "gitlab-runner-helper.linux-arm64",
		"linux/arm/v7":  "gitlab-runner-helper.linux-arm",
		"linux/ppc64le": "gitlab-runner-helper.linux-ppc64le",
		"linux/s390x":   "gitlab-runner-helper.linux-s390x",
	}, outputs(plan, 0))
	assert.Equal(t, Binary{Main: "."}, plan.Binaries[1])
	assert.Equal(t, map[string]string{
		"linux/amd64":   "gitlab-runner-linux-amd64",
		"linux/arm64":   "gitlab-runner-linux-arm64",
		"linux/arm/v7":  "gitlab-runner-linux-arm",
		"linux/ppc64le": "gitlab-runner-linux-ppc64le",
		"linux/s390x":   "gitlab-runner-linux-s390x",
	}, outputs(plan, 1))

	require.Len(t, plan.Images, 2)
	helper, runner := plan.Images[0], plan.Images[1]
	assert.Equal(t, "gitlab-runner-helper", helper.Name)
	assert.Equal(t, "built-in runner-helper/Dockerfile", helper.DockerfileName)
	assert.Empty(t, helper.Dockerfile)
	assert.Contains(t, string(helper.DockerfileData), "COPY --from=binary_dir --chmod=755 gitlab-runner-helper.${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner-helper")
	assert.Equal(t, map[string]string{"BASE_IMAGE": "scratch"}, helper.Args)
	assert.Equal(t, map[string]string{"binary_dir": BinariesContext}, helper.Contexts)
	assert.Equal(t, []string{"17.10.0"}, helper.Tags)
	assert.Equal(t, map[string][]string{
		"linux/amd64": {"x86_64-17.10.0"}, "linux/arm64": {"arm64-17.10.0"}, "linux/arm/v7": {"arm-17.10.0"},
		"linux/ppc64le": {"ppc64le-17.10.0"}, "linux/s390x": {"s390x-17.10.0"},
	}, platformTags(helper))
	assert.Len(t, helper.Platforms, 5)

	assert.Equal(t, "gitlab-runner", runner.Name)
	assert.Equal(t, "built-in runner/Dockerfile", runner.DockerfileName)
	assert.Equal(t, map[string]string{
		"binary_dir":    BinariesContext,
		"packaging_dir": filepath.Join(exampleDir, "packaging", "root", "usr", "share", "gitlab-runner"),
	}, runner.Contexts)
	assert.Equal(t, []string{"17.10.0", "latest"}, runner.Tags)
	assert.Nil(t, platformTags(runner))
	assert.Len(t, runner.Platforms, 5)
	assert.FileExists(t, filepath.Join(runner.Contexts["packaging_dir"], "clear-docker-cache"))
}
