package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mixedRecipe is a recipe whose helper image has Linux entries (from its
// Dockerfile) and two Windows entries, each on the base of its build.
const mixedRecipe = `platforms: [linux/amd64, linux/arm64, windows/amd64:10.0.17763, windows/amd64:10.0.20348]
binaries:
  - main: ./apps/gitlab-runner-helper
    output: gitlab-runner-helper.{{.OS}}-{{.Arch}}
  - main: .
    output: gitlab-runner-{{.OS}}-{{.Arch}}
images:
  - name: gitlab-runner-helper
    args: {BASE_IMAGE: scratch}
    contexts: {binary_dir: "binaries:"}
    tags: ["{{.Version}}"]
    windows:
      binary: ./apps/gitlab-runner-helper
      bases:
        "10.0.17763": mcr.microsoft.com/windows/nanoserver:ltsc2019
        10.0.20348: "{{.Env.BASE_REGISTRY}}/nanoserver-{{.Arch}}:ltsc2022"
  - name: gitlab-runner
    args: {BASE_IMAGE: scratch}
    contexts: {binary_dir: "binaries:", packaging_dir: packaging}
    tags: [latest]
    platforms: [linux/amd64, linux/arm64]
`

// A recipe names a Windows base per build: each Windows entry of the image
// gets the base of its build and the binary windows.binary names; Windows
// platforms compile that binary only, each under its own name.
func TestPlanWindows(t *testing.T) {
	c := writeConfig(t, mixedRecipe)
	plan, err := c.Plan(testVars, Selection{})
	require.NoError(t, err)
	helper := plan.Images[0]
	require.NotNil(t, helper.Windows)
	assert.Equal(t, 0, helper.Windows.Binary)
	assert.Equal(t, map[string]string{
		"windows/amd64:10.0.17763": "mcr.microsoft.com/windows/nanoserver:ltsc2019",
		"windows/amd64:10.0.20348": "registry.example.com/base/nanoserver-amd64:ltsc2022",
	}, bases(helper), "Linux entries keep their Dockerfile's FROM")
	assert.Nil(t, plan.Images[1].Windows, "an image without Windows platforms")
	assert.Equal(t, map[string]string{
		"linux/amd64":              "gitlab-runner-helper.linux-amd64",
		"linux/arm64":              "gitlab-runner-helper.linux-arm64",
		"windows/amd64:10.0.17763": "gitlab-runner-helper.windows-amd64-10.0.17763",
		"windows/amd64:10.0.20348": "gitlab-runner-helper.windows-amd64-10.0.20348",
	}, outputs(plan, 0))
	assert.Equal(t, map[string]string{
		"linux/amd64":              "gitlab-runner-linux-amd64",
		"linux/arm64":              "gitlab-runner-linux-arm64",
		"windows/amd64:10.0.17763": "",
		"windows/amd64:10.0.20348": "",
	}, outputs(plan, 1), "no Windows entry holds gitlab-runner: not compiled for Windows")

	// Selecting one Windows build keeps its base; a recipe with one binary
	// needs no windows.binary.
	one := strings.Replace(strings.Replace(mixedRecipe, "      binary: ./apps/gitlab-runner-helper\n", "", 1), "  - main: .\n    output: gitlab-runner-{{.OS}}-{{.Arch}}\n", "", 1)
	one = one[:strings.Index(one, "  - name: gitlab-runner\n")]
	plan, err = writeConfig(t, one).Plan(testVars, Selection{Platforms: platforms(t, "linux/amd64,windows/amd64:10.0.20348.2340")})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"windows/amd64:10.0.20348.2340": "registry.example.com/base/nanoserver-amd64:ltsc2022"}, bases(plan.Images[0]),
		"a revision is served by the base of its build")
}

// Each wrong windows section is an error at its line, naming the way out,
// before anything is compiled.
func TestWindowsErrors(t *testing.T) {
	tests := []struct {
		name, old, new string
		sel            Selection
		want           string
	}{
		{name: "Windows platform without a base for its build", old: "        \"10.0.17763\": mcr.microsoft.com/windows/nanoserver:ltsc2019\n", new: "",
			sel:  Selection{Images: []string{"gitlab-runner-helper"}, Platforms: platforms(t, "windows/amd64:10.0.17763")},
			want: `:15: image gitlab-runner-helper for windows/amd64:10.0.17763: windows.bases has no base for build 10.0.17763 (it has: 10.0.20348); add "10.0.17763": REF, a Windows base of that build`},
		{name: "Windows platform without a windows section", old: "    windows:\n      binary: ./apps/gitlab-runner-helper\n      bases:\n        \"10.0.17763\": mcr.microsoft.com/windows/nanoserver:ltsc2019\n        10.0.20348: \"{{.Env.BASE_REGISTRY}}/nanoserver-{{.Arch}}:ltsc2022\"\n", new: "",
			want: `:8: image gitlab-runner-helper for windows/amd64:10.0.17763: a Windows entry needs a Windows base for build 10.0.17763: add windows: {bases: {"10.0.17763": mcr.microsoft.com/windows/nanoserver:ltsc2022}} under the image (its Dockerfile describes the Linux entries and is not applied to Windows ones)`},
		{name: "Windows platform without a build", sel: Selection{Images: []string{"gitlab-runner-helper"}, Platforms: platforms(t, "linux/amd64,windows/amd64")},
			want: `:1: image gitlab-runner-helper: windows/amd64 names no Windows build`},
		{name: "scratch as a Windows base", old: "mcr.microsoft.com/windows/nanoserver:ltsc2019", new: "scratch",
			want: `:15: images[0].windows.bases.10.0.17763: scratch has no Windows system files to run the .exe on`},
		{name: "a rendered scratch", old: "mcr.microsoft.com/windows/nanoserver:ltsc2019", new: `"{{if true}}scratch{{end}}"`,
			want: `:15: images[0].windows.bases.10.0.17763 renders "scratch" for windows/amd64:10.0.17763; want a Windows base image`},
		{name: "a key that is no build", old: `"10.0.17763"`, new: "ltsc2019",
			want: `:15: images[0].windows.bases: "ltsc2019" is not a Windows build; want major.minor.build`},
		{name: "a build with a revision", old: `"10.0.17763"`, new: "10.0.17763.5830",
			want: `:15: images[0].windows.bases: "10.0.17763.5830" is not a Windows build`},
		{name: "a build the image does not build", old: `"10.0.17763"`, new: `"10.0.26100"`,
			want: `:15: images[0].windows.bases: the image builds no Windows platform of build 10.0.26100`},
		{name: "binary that is not a main", old: "binary: ./apps/gitlab-runner-helper", new: "binary: ./apps/nope",
			want: `:13: images[0].windows.binary: "./apps/nope" is not a binaries[].main (the recipe has: ./apps/gitlab-runner-helper, .)`},
		{name: "no binary with two binaries", old: "      binary: ./apps/gitlab-runner-helper\n", new: "",
			want: `:13: images[0].windows: missing binary: the recipe has 2 binaries (./apps/gitlab-runner-helper, .)`},
		{name: "no bases", old: "      bases:\n        \"10.0.17763\": mcr.microsoft.com/windows/nanoserver:ltsc2019\n        10.0.20348: \"{{.Env.BASE_REGISTRY}}/nanoserver-{{.Arch}}:ltsc2022\"\n", new: "",
			want: `:13: images[0].windows: missing bases`},
		{name: "a Windows platform under base", old: "    tags: [\"{{.Version}}\"]\n", new: "    tags: [\"{{.Version}}\"]\n    base: {\"windows/amd64:10.0.20348\": x}\n",
			want: `:12: images[0].base: windows/amd64:10.0.20348 is a Windows platform: its base goes under windows.bases by build`},
		{name: "unknown key", old: "      bases:", new: "      base:",
			want: `:14: unknown key "base" in images[0].windows (known: binary, bases)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := mixedRecipe
			if tt.old != "" {
				text = strings.Replace(mixedRecipe, tt.old, tt.new, 1)
				require.NotEqual(t, mixedRecipe, text)
			}
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "packaging"), 0o755))
			path := filepath.Join(dir, "helperbuild.yaml")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			c, err := Load(path)
			if err == nil {
				_, err = c.Plan(testVars, tt.sel)
			}
			require.Error(t, err)
			_, msg, _ := strings.Cut(err.Error(), "helperbuild.yaml")
			assert.True(t, strings.HasPrefix(msg, tt.want), "got  %s\nwant %s", msg, tt.want)
		})
	}
}
