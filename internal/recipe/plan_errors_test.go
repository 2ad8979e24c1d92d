package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		vars    *Vars
		sel     Selection
		wantErr string // after "<dir>/helperbuild.yaml"
	}{
		{
			name:    "output collision across variants",
			yaml:    strings.Replace(minimal, "[linux/amd64, linux/arm64]", "[linux/arm/v6, linux/arm/v7]", 1),
			wantErr: `:7: binaries[0].output renders "helper.linux-arm" for both linux/arm/v6 and linux/arm/v7; add {{.Variant}} to tell them apart`,
		},
		{
			name:    "output collision across binaries",
			yaml:    strings.Replace(minimal, "images:\n", "  - main: ./other\n    output: \"{{if eq .Arch \\\"arm64\\\"}}helper.linux-amd64{{else}}other{{end}}\"\nimages:\n", 1),
			wantErr: `:9: binaries[1].output renders "helper.linux-amd64" for linux/arm64, the same name as binaries[0] for linux/amd64`,
		},
		{
			name:    "output with a slash",
			yaml:    strings.Replace(minimal, "output: helper.{{.OS}}-{{.Arch}}", "output: \"{{.OS}}/{{.Arch}}/helper\"", 1),
			wantErr: `:7: binaries[0].output renders "linux/amd64/helper" for linux/amd64; want a plain file name (no / or ..)`,
		},
		{
			name:    "output dot-dot",
			yaml:    strings.Replace(minimal, "output: helper.{{.OS}}-{{.Arch}}", "output: \"{{if eq .Arch \\\"arm64\\\"}}..{{else}}x{{end}}\"", 1),
			wantErr: `:7: binaries[0].output renders ".." for linux/arm64; want a plain file name (no / or ..)`,
		},
		{
			name:    "misspelt field in ldflags",
			yaml:    strings.Replace(minimal, "{{.Version}}\n", "{{.Verison}}\n", 1),
			wantErr: `:4: build.ldflags "-X m/common.VERSION={{.Verison}}": at <.Verison>: no field Verison here (fields: .Branch .Date .Env .Revision .Version)`,
		},
		{
			name:    "unset env in args",
			yaml:    strings.Replace(minimal, "{BASE_IMAGE: scratch}", "{BASE_IMAGE: \"{{.Env.BASE}}/helper\"}", 1),
			wantErr: `:10: images[0].args.BASE_IMAGE "{{.Env.BASE}}/helper": at <.Env.BASE>: environment variable BASE is not set`,
		},
		{
			name:    "invalid rendered tag",
			yaml:    minimal,
			vars:    &Vars{Version: "v1.2.3+build.5"},
			wantErr: `:12: image gitlab-runner-helper: images[0].tags[0] renders tag "v1.2.3+build.5": '+' (character 7) is not allowed in a tag, only A-Z a-z 0-9 _ . -; use the replace template function: {{.Version | replace "+" "-"}}`,
		},
		{
			name:    "invalid rendered tag from a template with a suffix and a pipe",
			yaml:    strings.Replace(minimal, `tags: ["{{.Version}}"]`, `tags: ["{{ .Version | trimPrefix \"v\" }}-alpine"]`, 1),
			vars:    &Vars{Version: "v17.10.0+fancy.1"},
			wantErr: `:12: image gitlab-runner-helper: images[0].tags[0] renders tag "17.10.0+fancy.1-alpine": '+' (character 8) is not allowed in a tag, only A-Z a-z 0-9 _ . -; use the replace template function: {{.Version | trimPrefix "v" | replace "+" "-"}}-alpine`,
		},
		{
			name:    "rendered tag starting with a dot",
			yaml:    strings.Replace(minimal, `tags: ["{{.Version}}"]`, `tags: ["{{.Branch}}"]`, 1),
			vars:    &Vars{Version: "v1", Branch: ".hidden"},
			wantErr: `:12: image gitlab-runner-helper: images[0].tags[0] renders tag ".hidden": a tag cannot start with '.'; use the trimPrefix template function: {{.Branch | trimPrefix "."}}`,
		},
		{
			name:    "extra tag that is also a platform tag",
			yaml:    minimal + "    platform_tags: [\"{{.GitLabArch}}-{{.Version}}\"]\n",
			sel:     Selection{Tags: []string{"x86_64-v17.10.0"}},
			wantErr: `:13: image gitlab-runner-helper: platform tag "x86_64-v17.10.0" of linux/amd64 is also an index tag`,
		},
		{
			name:    "empty rendered tag",
			yaml:    minimal,
			vars:    &Vars{},
			wantErr: `:12: image gitlab-runner-helper: images[0].tags[0] renders tag "": a tag cannot be empty`,
		},
		{
			name:    "invalid platform tag",
			yaml:    minimal + "    platform_tags: [\"{{.OS}}/{{.Arch}}\"]\n",
			wantErr: `:13: image gitlab-runner-helper: images[0].platform_tags[0] renders tag "linux/amd64" for linux/amd64: '/' (character 6) is not allowed in a tag, only A-Z a-z 0-9 _ . -; use the replace template function: {{.Version | replace "/" "-"}}`,
		},
		{
			name:    "platform tags collide",
			yaml:    strings.NewReplacer("[linux/amd64, linux/arm64]", "[linux/arm/v6, linux/arm/v7]", "{{.Arch}}", "{{.Arch}}{{.Variant}}").Replace(minimal) + "    platform_tags: [\"{{.GitLabArch}}-{{.Version}}\"]\n",
			wantErr: `:13: image gitlab-runner-helper: platform tag "arm-v17.10.0" is rendered for both linux/arm/v6 and linux/arm/v7; add {{.Variant}} or narrow the platforms`,
		},
		{
			name:    "platform tag equals index tag",
			yaml:    minimal + "    platform_tags: [\"{{.Version}}\"]\n",
			wantErr: `:13: image gitlab-runner-helper: platform tag "v17.10.0" of linux/amd64 is also an index tag`,
		},
		{
			name:    "default dockerfile without BASE_IMAGE",
			yaml:    strings.Replace(minimal, "    args: {BASE_IMAGE: scratch}\n", "", 1),
			wantErr: `:9: image gitlab-runner-helper: the built-in Dockerfile needs args.BASE_IMAGE (a base image, or scratch) or a base entry for linux/amd64`,
		},
		{
			name:    "missing dockerfile file",
			yaml:    minimal + "  - name: other\n    dockerfile: dockerfiles/nope/Dockerfile\n",
			wantErr: `:14: images[1].dockerfile: lstat <dir>/dockerfiles/nope: no such file or directory`,
		},
		{
			name:    "dockerfile is a directory",
			yaml:    minimal + "  - name: other\n    dockerfile: packaging\n",
			wantErr: `:14: images[1].dockerfile: <dir>/packaging is not a regular file`,
		},
		{
			name:    "dockerfile escapes through a symlink",
			yaml:    minimal + "  - name: other\n    dockerfile: escape/Dockerfile\n",
			wantErr: `:14: images[1].dockerfile: escape/Dockerfile resolves to <outside>/Dockerfile, outside <dir>`,
		},
		{
			name:    "context missing",
			yaml:    strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{binary_dir: "binaries:", extra: nope}`, 1),
			wantErr: `:11: images[0].contexts.extra: lstat <dir>/nope: no such file or directory`,
		},
		{
			name:    "context outside the recipe directory",
			yaml:    strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{binary_dir: "binaries:", host: /etc}`, 1),
			wantErr: `:11: images[0].contexts.host: /etc resolves to /etc, outside <dir>; contexts must be inside the recipe's directory`,
		},
		{
			name:    "context is a file",
			yaml:    strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{binary_dir: "binaries:", extra: helperbuild.yaml}`, 1),
			wantErr: `:11: images[0].contexts.extra: <dir>/helperbuild.yaml is not a directory`,
		},
		{
			name:    "no platforms anywhere",
			yaml:    strings.Replace(minimal, "platforms: [linux/amd64, linux/arm64]\n", "", 1),
			wantErr: `:8: image gitlab-runner-helper: no platforms: list them under platforms (top level or the image's) or select some`,
		},
		{
			name:    "no platforms and no images",
			yaml:    strings.Replace(minimal[:strings.Index(minimal, "images:")], "platforms: [linux/amd64, linux/arm64]\n", "", 1),
			wantErr: `: no platforms: list them under platforms or select some`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outside := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(outside, "Dockerfile"), []byte("FROM scratch\n"), 0o644))
			c := writeConfig(t, tt.yaml)
			require.NoError(t, os.Symlink(outside, filepath.Join(c.Dir, "escape")))
			vars := testVars
			if tt.vars != nil {
				vars = *tt.vars
			}
			_, err := c.Plan(vars, tt.sel)
			require.Error(t, err)
			want := c.Path + tt.wantErr
			want = strings.ReplaceAll(want, "<dir>", c.Dir)
			want = strings.ReplaceAll(want, "<outside>", outside)
			assert.Equal(t, want, err.Error())
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestPlanBadDate(t *testing.T) {
	c := writeConfig(t, minimal)
	for _, date := range []string{"2025-03-20", "2025-03-20T10:11:12+01:00", "yesterday"} {
		_, err := c.Plan(Vars{Version: "v1", Date: date}, Selection{})
		require.Error(t, err, date)
		assert.Equal(t, `build date "`+date+`": want RFC 3339 in UTC, e.g. 2025-03-20T10:11:12Z`, err.Error())
	}
}

func TestPlanImagePlatformOrder(t *testing.T) {
	// Plan.Platforms follows the top-level order, not the order images list them.
	text := strings.Replace(minimal, "[linux/amd64, linux/arm64]", "[linux/amd64, linux/arm64, linux/s390x]", 1)
	text = strings.Replace(text, "    tags:", "    platforms: [linux/s390x, linux/arm64]\n    tags:", 1)
	c := writeConfig(t, text)
	plan, err := c.Plan(testVars, Selection{})
	require.NoError(t, err)
	assert.Equal(t, "linux/arm64,linux/s390x", platform.FormatList(Values(plan.Platforms)))
	assert.Equal(t, "linux/s390x,linux/arm64", platform.FormatList(Values(plan.Images[0].Platforms)), "an image's own list keeps its order")
}

func TestPlanWithoutImages(t *testing.T) {
	c := writeConfig(t, minimal[:strings.Index(minimal, "images:")])
	plan, err := c.Plan(testVars, Selection{Platforms: platforms(t, "linux/riscv64")})
	require.NoError(t, err)
	assert.Equal(t, "linux/riscv64", platform.FormatList(Values(plan.Platforms)))
	assert.Equal(t, map[string]string{"linux/riscv64": "helper.linux-riscv64"}, outputs(plan, 0))
	assert.Empty(t, plan.Images)
}

func TestPlanBaseInsteadOfBaseImage(t *testing.T) {
	// A built-in Dockerfile needs a FROM image for every platform: BASE_IMAGE
	// or a per-platform base entry.
	text := strings.Replace(minimal, "    args: {BASE_IMAGE: scratch}\n", "    base: {linux/amd64: a, linux/arm64/v8: \"b-{{.Arch}}\"}\n", 1)
	c := writeConfig(t, text)
	plan, err := c.Plan(testVars, Selection{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"linux/amd64": "a", "linux/arm64": "b-arm64"}, bases(plan.Images[0]))
	assert.Empty(t, plan.Images[0].Args)

	_, err = c.Plan(testVars, Selection{Platforms: platforms(t, "linux/amd64,linux/s390x")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs args.BASE_IMAGE (a base image, or scratch) or a base entry for linux/s390x")
}

func TestPlanUnbuildableSelection(t *testing.T) {
	c := writeConfig(t, minimal)
	_, err := c.Plan(testVars, Selection{Platforms: []v1.Platform{{OS: "windows", Architecture: "386"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "selected platforms: helperbuild builds no container image for windows/386")
}

func TestPlanExtraTags(t *testing.T) {
	c := writeConfig(t, minimal+"  - name: other\n    dockerfile: dockerfiles/custom/Dockerfile\n    tags: [\"{{.Version}}\", latest]\n")
	plan, err := c.Plan(testVars, Selection{Tags: []string{"stable", "v17.10.0"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"v17.10.0", "stable"}, plan.Images[0].Tags, "added after the image's own, once")
	assert.Equal(t, []string{"v17.10.0", "latest", "stable"}, plan.Images[1].Tags)

	plan, err = c.Plan(testVars, Selection{Images: []string{"other"}, Tags: []string{"stable"}})
	require.NoError(t, err)
	require.Len(t, plan.Images, 1, "only the selected images")

	_, err = c.Plan(testVars, Selection{Tags: []string{"v1+x"}})
	require.Error(t, err)
	assert.Equal(t, `extra tag "v1+x": '+' (character 3) is not allowed in a tag, only A-Z a-z 0-9 _ . -`, err.Error())
}
