package recipe

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// minimal is a valid config; tests append to or edit it.
const minimal = `platforms: [linux/amd64, linux/arm64]
build:
  flags: [-trimpath]
  ldflags: -X m/common.VERSION={{.Version}}
binaries:
  - main: ./apps/helper
    output: helper.{{.OS}}-{{.Arch}}
images:
  - name: gitlab-runner-helper
    args: {BASE_IMAGE: scratch}
    contexts: {binary_dir: "binaries:"}
    tags: ["{{.Version}}"]
`

func TestParseValid(t *testing.T) {
	c, err := Parse("dir/helperbuild.yaml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, "dir/helperbuild.yaml", c.Path)
	assert.True(t, strings.HasSuffix(c.Dir, "/dir"), c.Dir)
	assert.Equal(t, "linux/amd64,linux/arm64", platform.FormatList(c.Platforms))
	assert.Equal(t, BuildSpec{Flags: []string{"-trimpath"}, Ldflags: "-X m/common.VERSION={{.Version}}"}, c.Build)
	assert.Equal(t, []BinarySpec{{Main: "./apps/helper", Output: "helper.{{.OS}}-{{.Arch}}"}}, c.Binaries)
	require.Len(t, c.Images, 1)
	assert.Equal(t, ImageSpec{
		Name:     "gitlab-runner-helper",
		Args:     map[string]string{"BASE_IMAGE": "scratch"},
		Contexts: map[string]string{"binary_dir": "binaries:"},
		Tags:     []string{"{{.Version}}"},
	}, c.Images[0])
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // the whole error
	}{
		{"empty", "", `helperbuild.yaml: empty config; want at least binaries`},
		{"comment only", "# nothing\n", `helperbuild.yaml: empty config; want at least binaries`},
		{"syntax", "build:\n  flags: [a\n", `helperbuild.yaml:2:10: sequence end token ']' not found`},
		{"bad indentation", "build:\n  ldflags: x\n env: []\n", `helperbuild.yaml:3:2: value is not allowed in this context; check this line's indentation against the lines above it`},
		{"two documents", minimal + "---\nplatforms: []\n", `helperbuild.yaml:13: a second YAML document; a config is one document`},
		{"unknown top-level key", "platform: [linux/amd64]\n", `helperbuild.yaml:1: unknown key "platform" at top level (known: platforms, build, binaries, images)`},
		{"unknown key in build", strings.Replace(minimal, "  ldflags:", "  ldflag:", 1), `helperbuild.yaml:4: unknown key "ldflag" in build (known: flags, ldflags, env)`},
		{"unknown key in binary", strings.Replace(minimal, "    output:", "    out:", 1), `helperbuild.yaml:7: unknown key "out" in binaries[0] (known: main, output)`},
		{"unknown key in image", minimal + "    tag: [x]\n", `helperbuild.yaml:13: unknown key "tag" in images[0] (known: name, dockerfile, args, contexts, tags, platform_tags, platforms, base, contract, windows)`},
		{"duplicate key", minimal + "    tags: [x]\n", `helperbuild.yaml:13: duplicate key "tags" in images[0] (first at line 12)`},
		{"duplicate map key", strings.Replace(minimal, "{BASE_IMAGE: scratch}", "{BASE_IMAGE: scratch, BASE_IMAGE: x}", 1), `helperbuild.yaml:10: duplicate key "BASE_IMAGE" in images[0].args (first at line 10)`},
		{"list wanted", "platforms: linux/amd64\n", `helperbuild.yaml:1: platforms: want a list, got the value "linux/amd64"`},
		{"string wanted", strings.Replace(minimal, "ldflags: -X m/common.VERSION={{.Version}}", "ldflags: [-w]", 1), `helperbuild.yaml:4: build.ldflags: want a string, got a list`},
		{"mapping wanted", "build: [x]\n", `helperbuild.yaml:1: build: want a mapping (key: value), got a list`},
		{"alias", "x: &a [1]\n", `helperbuild.yaml:1: unknown key "x" at top level (known: platforms, build, binaries, images)`},
		{"alias value", "platforms: &p [linux/amd64]\nbuild:\n  flags: *p\n", `helperbuild.yaml:3: build.flags: YAML aliases (*p) are not supported; write the value out`},
		{"no binaries", "platforms: [linux/amd64]\n", `helperbuild.yaml: binaries: want at least one binary (main and output)`},
		{"missing main", strings.Replace(minimal, "  - main: ./apps/helper\n    output:", "  - output:", 1), `helperbuild.yaml:6: binaries[0]: missing main (the Go main package, e.g. ./apps/gitlab-runner-helper)`},
		{"missing output", strings.Replace(minimal, "    output: helper.{{.OS}}-{{.Arch}}\n", "", 1), `helperbuild.yaml:6: binaries[0]: missing output (the file name, e.g. gitlab-runner-helper.{{.OS}}-{{.Arch}})`},
		{"null output", strings.Replace(minimal, "output: helper.{{.OS}}-{{.Arch}}", "output:", 1), `helperbuild.yaml:7: binaries[0]: missing output (the file name, e.g. gitlab-runner-helper.{{.OS}}-{{.Arch}})`},
		{"main outside", strings.Replace(minimal, "./apps/helper", "../other", 1), `helperbuild.yaml:6: binaries[0].main: "../other" leaves the config file's directory`},
		{"main absolute", strings.Replace(minimal, "./apps/helper", "/src/helper", 1), `helperbuild.yaml:6: binaries[0].main: "/src/helper" is absolute; give a package relative to the config file, e.g. ./apps/gitlab-runner-helper`},
		{"missing image name", strings.Replace(minimal, "  - name: gitlab-runner-helper\n    args:", "  - args:", 1), `helperbuild.yaml:9: images[0]: missing name`},
		{"bad image name", strings.Replace(minimal, "name: gitlab-runner-helper", "name: GitLab-Helper", 1), `helperbuild.yaml:9: images[0].name: "GitLab-Helper" is not a repository path (lowercase letters, digits and . _ - between them, / between components)`},
		{"duplicate image name", minimal + "  - name: gitlab-runner-helper\n    dockerfile: Dockerfile\n", `helperbuild.yaml:13: images[1].name: "gitlab-runner-helper" is already the name of images[0] (line 9)`},
		{"no dockerfile", minimal + "  - name: other\n", `helperbuild.yaml:13: images[1]: missing dockerfile (only gitlab-runner-helper and gitlab-runner have a built-in one)`},
		{"default needs context", strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{bin: "binaries:"}`, 1), `helperbuild.yaml:11: images[0]: the built-in Dockerfile of gitlab-runner-helper copies from context "binary_dir"; add it to contexts`},
		{"dockerfile escapes", minimal + "  - name: other\n    dockerfile: ../x/Dockerfile\n", `helperbuild.yaml:14: images[1].dockerfile: "../x/Dockerfile" leaves the config file's directory`},
		{"dockerfile absolute", minimal + "  - name: other\n    dockerfile: /x/Dockerfile\n", `helperbuild.yaml:14: images[1].dockerfile: "/x/Dockerfile" is absolute; give a path relative to the config file`},
		{"empty context", strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{binary_dir: ""}`, 1), `helperbuild.yaml:11: images[0].contexts.binary_dir: empty; want a directory or "binaries:"`},
		{"null context", strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{binary_dir: }`, 1), `helperbuild.yaml:11: images[0].contexts.binary_dir: empty; want a directory or "binaries:"`},
		{"remote context", strings.Replace(minimal, `{binary_dir: "binaries:"}`, `{binary_dir: "docker-image://alpine"}`, 1), `helperbuild.yaml:11: images[0].contexts.binary_dir: "docker-image://alpine": only local directories and "binaries:" are supported`},
		{"bad contract", minimal + "    contract: worker\n", `helperbuild.yaml:13: images[0].contract: "worker" is not a contract (want helper or runner)`},
		{"bad platform", "platforms: [linux/amd64, linux]\n", `helperbuild.yaml:1: platforms: platform "linux": want os/arch[/variant][:os.version], e.g. linux/arm64, linux/arm/v7 or windows/amd64:10.0.20348`},
		{"bad platform block list", "platforms:\n  - linux/amd64\n  - windows/386\n", `helperbuild.yaml:3: platforms: platform "windows/386": helperbuild builds no container image for windows/386 (supported: linux/amd64, linux/arm64, linux/arm/v6, linux/arm/v7, linux/ppc64le, linux/s390x, linux/riscv64, linux/386, ..., windows/amd64, windows/arm64)`},
		{"duplicate platform", "platforms:\n  - linux/arm/v7\n  - linux/arm\n", `helperbuild.yaml:3: platforms: linux/arm/v7 is listed twice (also at line 2)`},
		{"image platform outside top level", minimal + "    platforms: [linux/s390x]\n", `helperbuild.yaml:13: images[0].platforms: linux/s390x is not in the top-level platforms (linux/amd64,linux/arm64)`},
		{"bad image platform", minimal + "    platforms: [linux/amd64, arm64]\n", `helperbuild.yaml:13: images[0].platforms: platform "arm64": want os/arch[/variant][:os.version], e.g. linux/arm64, linux/arm/v7 or windows/amd64:10.0.20348`},
		{"base for foreign platform", minimal + "    base: {linux/s390x: x}\n", `helperbuild.yaml:13: images[0].base: linux/s390x is not a platform of this image (linux/amd64,linux/arm64)`},
		{"base bad platform", minimal + "    base: {arm64: x}\n", `helperbuild.yaml:13: images[0].base: platform "arm64": want os/arch[/variant][:os.version], e.g. linux/arm64, linux/arm/v7 or windows/amd64:10.0.20348`},
		{"base empty", minimal + "    base: {linux/arm64: \"\"}\n", `helperbuild.yaml:13: images[0].base.linux/arm64: empty image reference`},
		{"bad template syntax", strings.Replace(minimal, "{{.Version}}\n", "{{.Version}\n", 1), `helperbuild.yaml:4: build.ldflags "-X m/common.VERSION={{.Version}": bad character U+007D '}'`},
		{"bad tag template", strings.Replace(minimal, `tags: ["{{.Version}}"]`, `tags: ["{{if}}"]`, 1), `helperbuild.yaml:12: images[0].tags[0] "{{if}}": missing value for if`},
		{"unknown function", strings.Replace(minimal, "helper.{{.OS}}", "helper.{{title .OS}}", 1), `helperbuild.yaml:7: binaries[0].output "helper.{{title .OS}}-{{.Arch}}": function "title" not defined`},
		{"flag not a flag", strings.Replace(minimal, "[-trimpath]", "[trimpath]", 1), `helperbuild.yaml:3: build.flags[0]: "trimpath" is not a flag (want e.g. -trimpath)`},
		{"flag -o", strings.Replace(minimal, "[-trimpath]", "[-trimpath, -o=x]", 1), `helperbuild.yaml:3: build.flags[1]: "-o=x": output names come from binaries[].output`},
		{"flag -ldflags", strings.Replace(minimal, "[-trimpath]", "[--ldflags=-w]", 1), `helperbuild.yaml:3: build.flags[0]: "--ldflags=-w": use build.ldflags`},
		{"env not kv", strings.Replace(minimal, "  flags: [-trimpath]\n", "  env:\n    - GOFLAGS\n", 1), `helperbuild.yaml:4: build.env[0]: "GOFLAGS": want KEY=VALUE`},
		{"env platform key", strings.Replace(minimal, "  flags: [-trimpath]\n", "  env: [CGO_ENABLED=0, GOARCH=arm]\n", 1), `helperbuild.yaml:3: build.env[1]: GOARCH is set per platform; choose platforms instead`},
		{"env GOWASM, which crossbuild drops too", strings.Replace(minimal, "  flags: [-trimpath]\n", "  env: [GOWASM=satconv]\n", 1), `helperbuild.yaml:3: build.env[0]: GOWASM is set per platform; choose platforms instead`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("helperbuild.yaml", []byte(tt.yaml))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(t.TempDir() + "/helperbuild.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "helperbuild.yaml: no such file or directory")
}
