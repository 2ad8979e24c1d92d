package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/dockerfiles"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

var testVars = Vars{
	Version: "v17.10.0", Revision: "1a2b3c4d", Branch: "17-10-stable", Date: "2025-03-20T10:11:12Z",
	Env: map[string]string{"BASE_REGISTRY": "registry.example.com/base"},
}

// writeConfig writes text as dir/helperbuild.yaml plus the files and
// directories the configs below refer to, and parses it.
func writeConfig(t *testing.T, text string) *Config {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "packaging"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dockerfiles", "custom"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dockerfiles", "custom", "Dockerfile"), []byte("FROM scratch\n"), 0o644))
	path := filepath.Join(dir, "helperbuild.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	c, err := Load(path)
	require.NoError(t, err)
	return c
}

func platforms(t *testing.T, s string) []v1.Platform {
	t.Helper()
	ps, err := platform.ParseList(s)
	require.NoError(t, err)
	return ps
}

const full = `platforms: [linux/amd64, linux/arm64, linux/arm/v7, linux/s390x]
build:
  flags: [-trimpath, "-tags={{.Env.BASE_REGISTRY | len}}"]
  ldflags: -w -X m/common.VERSION={{.Version}} -X m/common.BUILT={{.Date}}
  env: [GOFLAGS=-mod=vendor, "REV={{.Revision}}"]
binaries:
  - main: ./apps/gitlab-runner-helper
    output: gitlab-runner-helper.{{.OS}}-{{.Arch}}
  - main: .
    output: gitlab-runner-{{.OS}}-{{.Arch}}
images:
  - name: gitlab-runner-helper
    args: {BASE_IMAGE: "{{.Env.BASE_REGISTRY}}/runner-helper:alpine"}
    contexts: {binary_dir: "binaries:"}
    tags: ["{{.Version}}", "{{.Version}}"]
    platform_tags: ["{{.GitLabArch}}-{{.Version}}"]
    base: {linux/arm: "{{.Env.BASE_REGISTRY}}/helper:{{.Arch}}{{.Variant}}"}
    contract: helper
  - name: group/gitlab-runner
    dockerfile: dockerfiles/custom/Dockerfile
    args: {BASE_IMAGE: scratch}
    contexts: {binary_dir: "binaries:", packaging_dir: packaging}
    tags: ["{{.Version}}", latest]
    platforms: [linux/amd64, linux/arm64, linux/s390x]
    contract: runner
`

func TestPlan(t *testing.T) {
	c := writeConfig(t, full)
	plan, err := c.Plan(testVars, Selection{})
	require.NoError(t, err)

	assert.Equal(t, c.Dir, plan.Dir)
	assert.True(t, filepath.IsAbs(plan.Dir))
	assert.Equal(t, "linux/amd64,linux/arm64,linux/arm/v7,linux/s390x", platform.FormatList(Values(plan.Platforms)))
	assert.Equal(t, []string{"-trimpath", "-tags=25"}, plan.Flags)
	assert.Equal(t, "-w -X m/common.VERSION=v17.10.0 -X m/common.BUILT=2025-03-20T10:11:12Z", plan.Ldflags)
	assert.Equal(t, []string{"GOFLAGS=-mod=vendor", "REV=1a2b3c4d"}, plan.Env)

	require.Len(t, plan.Binaries, 2)
	assert.Equal(t, Binary{Main: "./apps/gitlab-runner-helper"}, plan.Binaries[0])
	assert.Equal(t, map[string]string{
		"linux/amd64": "gitlab-runner-helper.linux-amd64", "linux/arm64": "gitlab-runner-helper.linux-arm64",
		"linux/arm/v7": "gitlab-runner-helper.linux-arm", "linux/s390x": "gitlab-runner-helper.linux-s390x",
	}, outputs(plan, 0))
	assert.Equal(t, "gitlab-runner-linux-arm", outputs(plan, 1)["linux/arm/v7"], "binaries are built for every planned platform")

	require.Len(t, plan.Images, 2)
	helper := plan.Images[0]
	_, data, _ := dockerfiles.Default("gitlab-runner-helper")
	assert.Equal(t, Image{
		Name:           "gitlab-runner-helper",
		DockerfileName: "built-in runner-helper/Dockerfile",
		DockerfileData: data,
		Args:           map[string]string{"BASE_IMAGE": "registry.example.com/base/runner-helper:alpine"},
		Contexts:       map[string]string{"binary_dir": BinariesContext},
		Tags:           []string{"v17.10.0"},
		Platforms:      helper.Platforms, // below
		Contract:       "helper",
	}, helper)
	assert.Equal(t, map[string][]string{
		"linux/amd64": {"x86_64-v17.10.0"}, "linux/arm64": {"arm64-v17.10.0"},
		"linux/arm/v7": {"arm-v17.10.0"}, "linux/s390x": {"s390x-v17.10.0"},
	}, platformTags(helper))
	assert.Equal(t, Values(plan.Platforms), Values(helper.Platforms))
	assert.Equal(t, map[string]string{"linux/arm/v7": "registry.example.com/base/helper:armv7"}, bases(helper))

	runner := plan.Images[1]
	assert.Equal(t, "group/gitlab-runner", runner.Name)
	assert.Equal(t, filepath.Join(c.Dir, "dockerfiles", "custom", "Dockerfile"), runner.Dockerfile)
	assert.Equal(t, "dockerfiles/custom/Dockerfile", runner.DockerfileName)
	assert.Nil(t, runner.DockerfileData)
	assert.Equal(t, map[string]string{"binary_dir": BinariesContext, "packaging_dir": filepath.Join(c.Dir, "packaging")}, runner.Contexts)
	assert.Equal(t, []string{"v17.10.0", "latest"}, runner.Tags)
	assert.Nil(t, platformTags(runner))
	assert.Nil(t, bases(runner))
	assert.Equal(t, "linux/amd64,linux/arm64,linux/s390x", platform.FormatList(Values(runner.Platforms)))
}

func TestPlanSelection(t *testing.T) {
	c := writeConfig(t, full)
	tests := []struct {
		name      string
		sel       Selection
		images    string            // selected image names
		platforms string            // Plan.Platforms
		per       map[string]string // image -> its platforms
		wantErr   string
	}{
		{
			name: "all", images: "gitlab-runner-helper group/gitlab-runner", platforms: "linux/amd64,linux/arm64,linux/arm/v7,linux/s390x",
			per: map[string]string{"group/gitlab-runner": "linux/amd64,linux/arm64,linux/s390x"},
		},
		{
			name: "one image keeps its platforms", sel: Selection{Images: []string{"group/gitlab-runner"}},
			images: "group/gitlab-runner", platforms: "linux/amd64,linux/arm64,linux/s390x",
		},
		{
			name: "images in config order, once", sel: Selection{Images: []string{"group/gitlab-runner", "gitlab-runner-helper", "group/gitlab-runner"}},
			images: "gitlab-runner-helper group/gitlab-runner", platforms: "linux/amd64,linux/arm64,linux/arm/v7,linux/s390x",
			per: map[string]string{"group/gitlab-runner": "linux/amd64,linux/arm64,linux/s390x"},
		},
		{
			name: "platforms replace the top level, intersect the image's", sel: Selection{Platforms: platforms(t, "linux/s390x,linux/arm/v7,linux/ppc64le")},
			images: "gitlab-runner-helper group/gitlab-runner", platforms: "linux/s390x,linux/arm/v7,linux/ppc64le",
			per: map[string]string{"gitlab-runner-helper": "linux/s390x,linux/arm/v7,linux/ppc64le", "group/gitlab-runner": "linux/s390x"},
		},
		{
			name: "selected platforms are normalised and deduplicated", sel: Selection{Images: []string{"gitlab-runner-helper"}, Platforms: []v1.Platform{{OS: "linux", Architecture: "arm"}, {OS: "linux", Architecture: "arm", Variant: "v7"}}},
			images: "gitlab-runner-helper", platforms: "linux/arm/v7",
		},
		{
			name: "unknown image", sel: Selection{Images: []string{"gitlab-runner-helper", "helper"}},
			wantErr: `unknown image "helper" (` + c.Path + ` has: gitlab-runner-helper, group/gitlab-runner)`,
		},
		{
			name: "image left without platforms", sel: Selection{Images: []string{"group/gitlab-runner"}, Platforms: platforms(t, "linux/arm/v7")},
			wantErr: c.Path + `:24: image group/gitlab-runner builds none of the selected platforms linux/arm/v7 (its platforms: linux/amd64,linux/arm64,linux/s390x)`,
		},
		{
			name: "partial: an image that builds none of the selected platforms is left out", sel: Selection{Platforms: platforms(t, "linux/arm/v7"), Partial: true},
			images: "gitlab-runner-helper", platforms: "linux/arm/v7",
		},
		{
			name: "partial: every selected image left out", sel: Selection{Images: []string{"group/gitlab-runner"}, Platforms: platforms(t, "linux/arm/v7"), Partial: true},
			wantErr: c.Path + `:24: image group/gitlab-runner builds none of the selected platforms linux/arm/v7 (its platforms: linux/amd64,linux/arm64,linux/s390x)`,
		},
		{
			name: "selected platform nobody builds", sel: Selection{Images: []string{"group/gitlab-runner"}, Platforms: platforms(t, "linux/amd64,linux/arm/v7")},
			wantErr: `platform linux/arm/v7: none of the selected images (group/gitlab-runner) builds it`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := c.Plan(testVars, tt.sel)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			var names []string
			for _, img := range plan.Images {
				names = append(names, img.Name)
				want, ok := tt.per[img.Name]
				if !ok {
					want = tt.platforms
				}
				assert.Equal(t, want, platform.FormatList(Values(img.Platforms)), img.Name)
				for key := range platformTags(img) {
					assert.GreaterOrEqual(t, platform.Index(Values(img.Platforms), testkit.Platform(t, key)), 0, "platform tags only for built platforms")
				}
				for key := range bases(img) {
					assert.GreaterOrEqual(t, platform.Index(Values(img.Platforms), testkit.Platform(t, key)), 0, "base overrides only for built platforms")
				}
			}
			assert.Equal(t, tt.images, strings.Join(names, " "))
			assert.Equal(t, tt.platforms, platform.FormatList(Values(plan.Platforms)))
			for k := range plan.Binaries {
				assert.Len(t, outputs(plan, k), len(plan.Platforms))
			}
		})
	}
}

// outputs is the output name of plan.Binaries[k] per platform, keyed as the
// platform prints.
func outputs(plan *Plan, k int) map[string]string {
	out := map[string]string{}
	for _, p := range plan.Platforms {
		out[platform.Format(p.Platform)] = p.Outputs[k]
	}
	return out
}

// platformTags is img's platform tags per platform that has some; nil
// when none has.
func platformTags(img Image) map[string][]string {
	var out map[string][]string
	for _, p := range img.Platforms {
		if len(p.Tags) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[platform.Format(p.Platform)] = p.Tags
		}
	}
	return out
}

// bases is img's base override per platform that has one; nil when none
// has.
func bases(img Image) map[string]string {
	var out map[string]string
	for _, p := range img.Platforms {
		if p.Base != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[platform.Format(p.Platform)] = p.Base
		}
	}
	return out
}
