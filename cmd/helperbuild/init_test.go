package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/release"
)

// exampleCopy copies examples/gitlab-runner to a new directory, leaving
// out the files named skip, and returns it.
func exampleCopy(t *testing.T, skip ...string) string {
	t.Helper()
	src := exampleDir(t)
	dst := filepath.Join(t.TempDir(), "gitlab-runner")
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		for _, s := range skip {
			if rel == s {
				return nil
			}
		}
		if rel == "out" {
			return filepath.SkipDir // a make demo's output, if any
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm())
	}))
	return dst
}

// TestInitBuildsTheExample: init on the bundled example without its
// recipe writes a recipe that builds as is, into the very images the
// example's own recipe gives; it never overwrites, and --stdout prints
// what it would write.
func TestInitBuildsTheExample(t *testing.T) {
	dir := exampleCopy(t, "helperbuild.yaml")
	t.Chdir(dir)

	code, printed, stderr := run(t, baseEnv(), "init", "--stdout")
	require.Equal(t, 0, code, stderr)
	assert.NoFileExists(t, filepath.Join(dir, "helperbuild.yaml"), "--stdout writes nothing")

	code, stdout, stderr := run(t, baseEnv(), "init")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "wrote helperbuild.yaml and .gitlab-ci.yml\n"+
		"the CI fragment includes the release template from the project helperbuild/helperbuild on your GitLab: mirror https://github.com/helperbuild/helperbuild there (ref "+testRevision+" must be in it)\n"+
		"added /out/ (build's output) to .gitignore\nnext: helperbuild build   (an OCI layout in out/oci; check it with helperbuild verify)\n", stdout)
	assert.Equal(t, "/out/\n", readFile(t, filepath.Join(dir, ".gitignore")))
	written := readFile(t, filepath.Join(dir, "helperbuild.yaml"))
	ci := readFile(t, filepath.Join(dir, ".gitlab-ci.yml"))
	assert.Equal(t, "# --- helperbuild.yaml\n"+written+"\n# --- .gitlab-ci.yml\n"+ci, printed)

	// What the recipe says, as helperbuild reads it.
	cfg, err := recipe.Load(filepath.Join(dir, "helperbuild.yaml"))
	require.NoError(t, err)
	plan, err := cfg.Plan(recipe.Vars{Version: "v17.10.0", Revision: "abc", Branch: "main", Date: "2025-01-01T00:00:00Z"}, recipe.Selection{})
	require.NoError(t, err)
	assert.Equal(t, "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x", platformList(plan))
	assert.Equal(t, "-s -w -X example.com/gitlab-runner/common.VERSION=17.10.0 -X example.com/gitlab-runner/common.REVISION=abc -X example.com/gitlab-runner/common.BRANCH=main -X example.com/gitlab-runner/common.BUILT=2025-01-01T00:00:00Z", plan.Ldflags)
	require.Len(t, plan.Images, 2)
	assert.Equal(t, "gitlab-runner-helper", plan.Images[0].Name)
	assert.Equal(t, "scratch", plan.Images[0].Args["BASE_IMAGE"])
	assert.Equal(t, []string{"x86_64-v17.10.0"}, plan.Images[0].Platforms[0].Tags, "GitLab's <arch>-v<version>")
	assert.Equal(t, []string{"arm-v17.10.0"}, plan.Images[0].Platforms[2].Tags)
	assert.Empty(t, plan.Images[0].Contract, "the contract waits for a real base")
	assert.Contains(t, written, "\n    # contract: helper\n")
	assert.Contains(t, written, "\n    # contract: runner\n")
	assert.Equal(t, "gitlab-runner", plan.Images[1].Name)
	assert.Contains(t, ci, "\n    # the template at the commit of the development build of helperbuild (dev) that wrote this; change ref to a release tag\n    ref: "+testRevision+"\n    file: ci/gitlab/release.gitlab-ci.yml\n")
	assert.Contains(t, ci, "\n      helperbuild-version: "+testRevision+"\n", "the jobs install the helperbuild of ref")

	// A second init refuses, and changes nothing.
	code, stdout, stderr = run(t, baseEnv(), "init")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "helperbuild: helperbuild.yaml already exists in "+dir+"; init never overwrites: move it away, or print the files with --stdout\n", stderr)
	assert.Equal(t, written, readFile(t, filepath.Join(dir, "helperbuild.yaml")))

	// It builds as is, into the images of the example's own recipe.
	digests := func(dir string) []string {
		t.Helper()
		t.Chdir(dir)
		meta := filepath.Join(t.TempDir(), "m.json")
		// Without attestations: the provenance names the recipe file by
		// its digest, and init's file is not byte for byte the example's.
		code, _, stderr := run(t, baseEnv(), append([]string{"build", "--output", "oci:" + filepath.Join(t.TempDir(), "o"), "--metadata-file", meta, "--attest", "none"}, exampleArgs...)...)
		require.Equal(t, 0, code, stderr)
		var m release.Metadata
		require.NoError(t, json.Unmarshal([]byte(readFile(t, meta)), &m))
		var out []string
		for _, img := range m.Images {
			out = append(out, img.Name+" "+img.Digest)
			for _, p := range img.Platforms {
				line := "  " + p.Platform + " " + p.Digest
				for _, tag := range p.Tags {
					line += " " + tag[strings.LastIndex(tag, ":")+1:]
				}
				out = append(out, line)
			}
		}
		return out
	}
	got := digests(dir)
	want := digests(exampleCopy(t))
	assert.Equal(t, want, got)
	require.Len(t, got, 12)
}

// TestInitStagesAndGitignore: beside a .gitlab-ci.yml whose stages: lack
// the template's, init names the stages to add; an existing .gitignore
// gets /out/ appended once (a missing final newline kept apart), and one
// that already ignores out is left alone.
func TestInitStagesAndGitignore(t *testing.T) {
	for _, tc := range []struct{ name, ci, ignore, wantIgnore, stagesLine string }{
		{"stages test only", "stages: [test]\ntest:\n  stage: test\n  script: go test ./...\n", "bin/", "bin/\n/out/\n",
			"and add to its stages: build, deploy (the template's jobs run in stages build and deploy; or set the inputs build-stage and release-stage)\n"},
		{"stages with deploy", "stages:\n  - build\n  - test\n  - deploy\n", "out/\n", "out/\n", ""},
		{"GitLab's default stages", "test:\n  script: go test ./...\n", "", "/out/\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := exampleCopy(t, "helperbuild.yaml")
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitlab-ci.yml"), []byte(tc.ci), 0o644))
			if tc.ignore != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(tc.ignore), 0o644))
			}
			t.Chdir(dir)
			code, stdout, stderr := run(t, baseEnv(), "init")
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, tc.wantIgnore, readFile(t, filepath.Join(dir, ".gitignore")))
			assert.Equal(t, tc.wantIgnore != tc.ignore, strings.Contains(stdout, "added /out/ (build's output) to .gitignore\n"), stdout)
			if tc.stagesLine == "" {
				assert.NotContains(t, stdout, "stages", stdout)
			} else {
				assert.Contains(t, stdout, "    - local: .gitlab/ci/helperbuild.gitlab-ci.yml\n"+tc.stagesLine)
			}
			assert.Equal(t, tc.ci, readFile(t, filepath.Join(dir, ".gitlab-ci.yml")), "init never edits the pipeline")
		})
	}
}

// TestInitBesideAGitLabCI: a project with its own .gitlab-ci.yml gets the
// fragment in a file of its own, to include; a module without GitLab
// Runner's main packages is told what to do instead.
func TestInitBesideAGitLabCI(t *testing.T) {
	dir := exampleCopy(t, "helperbuild.yaml")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitlab-ci.yml"), []byte("test:\n  script: go test ./...\n"), 0o644))
	t.Chdir(dir)
	code, stdout, stderr := run(t, baseEnv(), "init", "--offline", "--base", "registry.example.com/base/runner-helper:1.0")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "wrote helperbuild.yaml and .gitlab/ci/helperbuild.gitlab-ci.yml\nadd it to .gitlab-ci.yml:\n  include:\n    - local: .gitlab/ci/helperbuild.gitlab-ci.yml\n")
	assert.Equal(t, "test:\n  script: go test ./...\n", readFile(t, filepath.Join(dir, ".gitlab-ci.yml")))
	assert.FileExists(t, filepath.Join(dir, ".gitlab", "ci", "helperbuild.gitlab-ci.yml"))
	cfg, err := recipe.Load(filepath.Join(dir, "helperbuild.yaml"))
	require.NoError(t, err)
	plan, err := cfg.Plan(recipe.Vars{Version: "v1.0.0"}, recipe.Selection{})
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com/base/runner-helper:1.0", plan.Images[0].Args["BASE_IMAGE"])

	other := relModule(t)
	t.Chdir(other)
	code, stdout, stderr = run(t, baseEnv(), "init")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "helperbuild: found main packages ./cmd/app, none named gitlab-runner-helper or gitlab-runner: init writes recipes for GitLab Runner's images; for another program use config-free mode, e.g. helperbuild push --base REF --tag REGISTRY/GROUP/NAME:TAG ./cmd/NAME\n", stderr)
	assert.NoFileExists(t, filepath.Join(other, "helperbuild.yaml"))
	assert.NoFileExists(t, filepath.Join(other, ".gitlab-ci.yml"))

	t.Chdir(t.TempDir())
	code, _, stderr = run(t, baseEnv(), "init")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no go.mod in ")

	code, _, stderr = run(t, baseEnv(), "init", "--base", "Not A Ref")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--base "Not A Ref"`)
}

func platformList(plan *recipe.Plan) string {
	var s []string
	for _, p := range plan.Platforms {
		s = append(s, p.Platform.OS+"/"+p.Platform.Architecture+strings.TrimSuffix("/"+p.Platform.Variant, "/"))
	}
	return strings.Join(s, ",")
}
