package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recipeYAML is a valid one-image recipe; cases replace parts of it.
const recipeYAML = `platforms: [linux/amd64]
binaries:
  - main: ./cmd/app
    output: app-{{.OS}}-{{.Arch}}
images:
  - name: app
    dockerfile: Dockerfile
    contexts: {binary_dir: "binaries:"}
    tags: [v1]
`

// recipeWindowsYAML adds a Windows entry to recipeYAML, on the base
// $WINBASE names.
var recipeWindowsYAML = strings.Replace(recipeYAML, "platforms: [linux/amd64]", `platforms: [linux/amd64, "windows/amd64:10.0.20348"]`, 1) +
	"    windows: {bases: {\"10.0.20348\": \"oci:{{.Env.WINBASE}}\"}}\n"

const okDockerfile = "FROM scratch\nCOPY --from=binary_dir app-linux-amd64 /usr/bin/app\n"

// TestBadInput feeds helperbuild one bad input at a time. Every case must:
// exit 2 (how it was called) or 1 (what it was asked to do failed); print
// nothing on stdout; end stderr with exactly one line "helperbuild: ..."
// naming the bad input (and, unless the failure comes after work started,
// print nothing else); write nothing into the module directory; leave no
// temporary file; never panic.
func TestBadInput(t *testing.T) {
	baseLayout := relBaseLayout(t)
	plain := relRegistry(t, "", "")
	relPushIndex(t, plain+"/g/base:1", relAmd64Index(t), "", "")
	auth := relRegistry(t, "ci-user", "right-password")
	relPushIndex(t, auth+"/g/base:1", relAmd64Index(t), "ci-user", "right-password")
	junk := filepath.Join(t.TempDir(), "junk.tar")
	require.NoError(t, os.WriteFile(junk, []byte(strings.Repeat("not a tar archive ", 64)), 0o644))
	vars := strings.NewReplacer("{layout}", baseLayout, "{plain}", plain, "{auth}", auth, "{junk}", junk)

	tests := []struct {
		name  string
		files map[string]string // written into the module before the run
		args  []string
		env   []string
		code  int
		want  []string // the error line contains each
		// afterWork: the failure comes after compiling started, so progress
		// lines ("level=...") may precede the error line.
		afterWork bool
	}{
		// How helperbuild is called.
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, want: []string{`"frobnicate"`}},
		{name: "unknown flag", args: []string{"build", "--nope"}, code: 2, want: []string{"--nope"}},
		{name: "two packages", args: []string{"build", "--base", "scratch", "./cmd/app", "./cmd/other"}, code: 2, want: []string{"./cmd/other"}},
		{name: "jobs 0", args: []string{"build", "--jobs", "0", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"--jobs"}},
		{name: "compression level 0", args: []string{"build", "--compression-level", "0", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"--compression-level 0", "1 (fastest) to 9"}},
		{name: "compression level 10", args: []string{"push", "--compression-level", "10", "--base", "scratch", "--tag", "{plain}/g/app:v1", "./cmd/app"}, code: 2, want: []string{"--compression-level 10"}},
		{name: "output with an unknown transport", args: []string{"build", "--output", "foo:bar", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{`--output "foo:bar"`}},
		{name: "push without --tag", args: []string{"push", "--platforms", "linux/amd64", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"--tag"}},
		{name: "base without package", args: []string{"build", "--base", "scratch"}, code: 2, want: []string{"--base"}},
		{name: "package and --config", args: []string{"build", "--config", "x.yaml", "./cmd/app"}, code: 2, want: []string{"--config"}},
		{name: "negative --retries", args: []string{"push", "--retries", "-1", "--base", "scratch", "--tag", "{plain}/g/app:v1", "./cmd/app"}, code: 2, want: []string{"--retries", "got -1"}},
		{name: "unknown --progress", args: []string{"build", "--progress", "fancy", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{`--progress "fancy"`, "auto, tty, plain, json or quiet"}},
		{name: "negative --timeout", args: []string{"push", "--timeout", "-1s", "--base", "scratch", "--tag", "{plain}/g/app:v1", "./cmd/app"}, code: 2, want: []string{"--timeout", "-1s"}},
		{name: "bad SOURCE_DATE_EPOCH", args: []string{"build", "--base", "scratch", "./cmd/app"}, env: []string{"SOURCE_DATE_EPOCH=yesterday"}, code: 2, want: []string{"SOURCE_DATE_EPOCH", "yesterday"}},

		// Platforms.
		{name: "platform without arch", args: []string{"build", "--platforms", "linux", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{`"linux"`}},
		{name: "platform without os", args: []string{"build", "--platforms", "arm64", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{`"arm64"`}},
		{name: "unknown arm variant", args: []string{"build", "--platforms", "linux/arm/v9", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"linux/arm/v9"}},
		{name: "not a container platform", args: []string{"build", "--platforms", "windows/386", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"windows/386", "builds no container image"}},
		{name: "windows os.version on linux", args: []string{"build", "--platforms", "linux/amd64:10.0.20348", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"linux/amd64:10.0.20348", "only meaningful for windows"}},
		{name: "windows platform on scratch", args: []string{"build", "--platforms", "linux/amd64,windows/amd64:10.0.20348", "--base", "scratch", "./cmd/app"}, code: 2, want: []string{"windows/amd64:10.0.20348", "needs a Windows base"}},
		{name: "windows platform on a linux base", args: []string{"build", "--platforms", "windows/amd64:10.0.20348", "--base", "oci:{layout}", "./cmd/app"}, code: 2, want: []string{"has no windows/amd64:10.0.20348 (it offers: linux/amd64)", "a Windows entry needs a Windows base"}},
		{name: "windows platform in recipe mode", files: map[string]string{"helperbuild.yaml": recipeYAML, "Dockerfile": okDockerfile},
			args: []string{"build", "--platforms", "windows/amd64:10.0.20348"}, code: 2, want: []string{"windows/amd64:10.0.20348", "a Windows entry needs a Windows base for build 10.0.20348", `add windows: {bases: {"10.0.20348": `}},
		{name: "windows base that is not Windows in recipe mode", files: map[string]string{"helperbuild.yaml": recipeWindowsYAML, "Dockerfile": okDockerfile},
			args: []string{"build"}, env: []string{"WINBASE={layout}"}, code: 2, want: []string{"has no windows/amd64:10.0.20348 (it offers: linux/amd64)", "a Windows entry needs a Windows base"}},
		{name: "windows base scratch in recipe mode", files: map[string]string{"helperbuild.yaml": strings.Replace(recipeWindowsYAML, "oci:{{.Env.WINBASE}}", "scratch", 1), "Dockerfile": okDockerfile},
			args: []string{"build"}, code: 2, want: []string{"helperbuild.yaml:", "scratch has no Windows system files"}},
		{name: "platform the base lacks", args: []string{"build", "--platforms", "linux/arm64", "--base", "oci:{layout}", "./cmd/app"}, code: 1, want: []string{"linux/arm64", "linux/amd64"}},

		// Bases.
		{name: "missing layout base", args: []string{"build", "--platforms", "linux/amd64", "--base", "oci:/nonexistent", "./cmd/app"}, code: 3, want: []string{"oci:/nonexistent: no such layout: /nonexistent does not exist"}},
		{name: "missing layout entry", args: []string{"build", "--platforms", "linux/amd64", "--base", "oci:{layout}:nope", "./cmd/app"}, code: 3, want: []string{`"nope"`}},
		{name: "registry base not found", args: []string{"build", "--platforms", "linux/amd64", "--base", "{plain}/g/missing:1", "./cmd/app"}, code: 3, want: []string{"{plain}/g/missing:1", "not found"}},
		{name: "unreachable registry", args: []string{"build", "--retries", "0", "--platforms", "linux/amd64", "--base", "127.0.0.1:1/g/base:1", "./cmd/app"}, code: 1, want: []string{"127.0.0.1:1", "connection refused"}},
		{name: "wrong credentials", args: []string{"build", "--platforms", "linux/amd64", "--base", "{auth}/g/base:1", "./cmd/app"},
			env: []string{"CI_REGISTRY={auth}", "CI_REGISTRY_USER=ci-user", "CI_REGISTRY_PASSWORD=wrong-password"}, code: 1, want: []string{"{auth}/g/base:1", "authentication failed"}},
		{name: "corrupt oci-archive base", args: []string{"build", "--platforms", "linux/amd64", "--base", "oci-archive:{junk}", "./cmd/app"}, code: 1, want: []string{"{junk}", "corrupt"}},

		// References and tags.
		{name: "push tag that is not a reference", args: []string{"push", "--platforms", "linux/amd64", "--base", "scratch", "--tag", "Bad Ref", "./cmd/app"}, code: 2, want: []string{`"Bad Ref"`}},
		{name: "layout tag that is not a tag", args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--tag", "Bad Ref", "./cmd/app"}, code: 2, want: []string{`"Bad Ref"`}},

		// Go sources.
		{name: "missing main package", args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "./cmd/missing"}, code: 2, want: []string{"./cmd/missing"}},
		{name: "compile error", files: map[string]string{"cmd/bad/main.go": "package main\n\nfunc main() {\n"},
			args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "./cmd/bad"}, code: 1, want: []string{"./cmd/bad", "syntax error"}, afterWork: true},

		// Recipes and Dockerfiles.
		{name: "no recipe and no package", args: []string{"build"}, code: 2, want: []string{"helperbuild.yaml"}},
		{name: "missing config file", args: []string{"build", "--config", "missing.yaml"}, code: 2, want: []string{"missing.yaml"}},
		{name: "unknown config key", files: map[string]string{"helperbuild.yaml": "platformz: [linux/amd64]\n" + recipeYAML, "Dockerfile": okDockerfile},
			args: []string{"build"}, code: 2, want: []string{"helperbuild.yaml:1", `"platformz"`}},
		{name: "template error", files: map[string]string{"helperbuild.yaml": strings.Replace(recipeYAML, "{{.OS}}", "{{.Nope}}", 1), "Dockerfile": okDockerfile},
			args: []string{"build"}, code: 2, want: []string{"helperbuild.yaml:4", ".Nope"}},
		{name: "unknown image", files: map[string]string{"helperbuild.yaml": recipeYAML, "Dockerfile": okDockerfile},
			args: []string{"build", "--image", "nope"}, code: 2, want: []string{`"nope"`}},
		{name: "Dockerfile with RUN", files: map[string]string{"helperbuild.yaml": recipeYAML, "Dockerfile": "FROM scratch\nRUN echo hi\n"},
			args: []string{"build"}, code: 2, want: []string{"Dockerfile:2", "RUN"}},
		{name: "COPY source outside its context", files: map[string]string{"helperbuild.yaml": recipeYAML, "Dockerfile": "FROM scratch\nCOPY ../outside.txt /x\n"},
			args: []string{"build"}, code: 1, want: []string{"Dockerfile:2", "../outside.txt"}, afterWork: true},
		{name: "dockerfile outside the recipe directory", files: map[string]string{"helperbuild.yaml": strings.Replace(recipeYAML, "dockerfile: Dockerfile", "dockerfile: ../Dockerfile", 1)},
			args: []string{"build"}, code: 2, want: []string{"../Dockerfile"}},

		// Outputs: checked before anything compiles (one line on stderr: no
		// "compiled" progress line before it).
		{name: "output path under a file", files: map[string]string{"afile": "x"},
			args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci:afile/sub", "./cmd/app"}, code: 2, want: []string{"afile"}},
		{name: "output layout that cannot be created", args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci:/proc/nope", "./cmd/app"},
			code: 2, want: []string{"--output oci:/proc/nope: cannot create /proc/nope"}},
		{name: "output archive in a directory that takes no files", args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci-archive:/proc/nope.tar", "./cmd/app"},
			code: 2, want: []string{"--output oci-archive:/proc/nope.tar: cannot write /proc/nope.tar"}},
		{name: "output archive under a file", files: map[string]string{"afile": "x"}, args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci-archive:afile/x.tar", "./cmd/app"},
			code: 2, want: []string{"--output oci-archive:afile/x.tar: afile is a file, not a directory"}},
		{name: "output archive that is a directory", files: map[string]string{"adir/f": "x"},
			args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci-archive:adir", "./cmd/app"}, code: 2, want: []string{"adir is a directory"}},
		{name: "output layout with a broken index.json", files: map[string]string{"lay/index.json": "{nope"},
			args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci:lay", "./cmd/app"}, code: 2, want: []string{"--output oci:lay: lay is not a usable OCI layout: index.json"}},
		{name: "dotenv under a file", files: map[string]string{"afile": "x"}, args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--dotenv", "afile/build.env", "./cmd/app"},
			code: 2, want: []string{"--dotenv afile/build.env: afile is not a directory"}},
		{name: "dotenv that is a directory", files: map[string]string{"adir/f": "x"},
			args: []string{"push", "--platforms", "linux/amd64", "--base", "scratch", "--tag", "{plain}/g/app:v1", "--dotenv", "adir", "./cmd/app"}, code: 2, want: []string{"--dotenv adir is a directory"}},
		{name: "metadata file in a directory that takes no files", args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--metadata-file", "/proc/m.json", "./cmd/app"},
			code: 2, want: []string{"--metadata-file /proc/m.json:"}},
		{name: "cache directory that cannot be created", args: []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "--cache-dir", "/proc/nope", "./cmd/app"},
			code: 2, want: []string{"--cache-dir /proc/nope", "--no-cache"}},

		// verify.
		{name: "verify without a reference", args: []string{"verify"}, code: 2, want: []string{"verify"}},
		{name: "verify --format xml", args: []string{"verify", "--format", "xml", "oci:{layout}"}, code: 2, want: []string{`"xml"`}},
		{name: "verify a missing layout", args: []string{"verify", "oci:/nonexistent/layout"}, code: 3, want: []string{"oci:/nonexistent/layout: no such layout"}},
	}
	require.GreaterOrEqual(t, len(tests), 25)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := relModule(t)
			relWrite(t, dir, tt.files)
			t.Chdir(dir)
			before := relSnapshot(t, dir)
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = vars.Replace(a)
			}
			env := tt.env
			for i := range env {
				env[i] = vars.Replace(env[i])
			}

			res := relRun(t, t.Context(), relEnv(t, env...), args...)

			assert.Equal(t, tt.code, res.code, "exit code; stderr: %s", res.stderr)
			assert.Empty(t, res.stdout, "stdout")
			lines := relLines(res.stderr)
			require.NotEmpty(t, lines, "stderr is empty")
			// The error is the last line, or from its first line on the
			// lines of a child process's output (a compile error).
			at := len(lines) - 1
			for i, l := range lines {
				if strings.HasPrefix(l, "helperbuild: ") {
					at = i
					break
				}
			}
			last := strings.Join(lines[at:], "\n")
			assert.True(t, strings.HasPrefix(last, "helperbuild: "), "the error starts with helperbuild: %q", last)
			for _, w := range tt.want {
				assert.Contains(t, last, vars.Replace(w), "the error names the input")
			}
			if tt.afterWork {
				for _, l := range lines[:at] {
					assert.False(t, strings.HasPrefix(l, "helperbuild: "), "only progress precedes the error: %q", l)
				}
			} else {
				assert.Len(t, lines, 1, "one line on stderr: %q", res.stderr)
			}
			assert.NotContains(t, res.stderr, "panic")
			assert.NotContains(t, res.stderr, "goroutine ")
			assert.Equal(t, before, relSnapshot(t, dir), "nothing written into the module directory")
		})
	}
}

// TestDuplicatePlatformsAreRefused: a platform named twice, in one
// spelling or two, is a usage error naming both, before anything is
// written (issue 39: it was dropped silently).
func TestDuplicatePlatformsAreRefused(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	before := relSnapshot(t, dir)
	for list, want := range map[string]string{
		"linux/amd64,linux/amd64":  "--platforms: linux/amd64 is given twice; give it once",
		"linux/amd64,linux/x86_64": "--platforms: linux/amd64 and linux/x86_64 are both linux/amd64; give it once",
	} {
		res := relRun(t, t.Context(), relEnv(t), "build", "--platforms", list, "--base", "scratch", "./cmd/app")
		assert.Equal(t, exitUsage, res.code, res.stderr)
		assert.Contains(t, res.stderr, want)
		assert.Empty(t, res.stdout)
	}
	assert.Equal(t, before, relSnapshot(t, dir), "nothing written into the module directory")
}
