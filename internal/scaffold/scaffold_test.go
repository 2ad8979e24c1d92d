package scaffold

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// TestInspect: the helper and runner are found by their directories, the
// version package by its variables (a package named common before others,
// never a main package), and what is missing shapes the recipe.
func TestInspect(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":                                 "module gitlab.example.com/fork/runner\n\ngo 1.22\n",
		"cmd/gitlab-runner/main.go":              "package main\n\nvar VERSION, REVISION, BRANCH, BUILT string\n\nfunc main() {}\n",
		"apps/gitlab-runner-helper/main.go":      "package main\n\nfunc main() {}\n",
		"tools/gen/main.go":                      "package main\n\nfunc main() {}\n",
		"internal/build/info.go":                 "package build\n\nvar VERSION, REVISION = \"\", \"\"\n",
		"internal/more/info.go":                  "package more\n\nvar VERSION, REVISION, BUILT = \"\", \"\", \"\"\n",
		"common/version.go":                      "package common\n\nvar (\n\tVERSION = \"dev\"\n\tREVISION = \"HEAD\"\n)\n\nconst BRANCH = \"x\"\n",
		"common/broken_test.go":                  "package common\n",
		"packaging/root/usr/share/README.md":     "not the runner's packaging dir\n",
		"apps/gitlab-runner-helper/extra/doc.go": "package extra\n",
	})
	r, err := Inspect(t.Context(), dir, "", append(os.Environ(), "GOFLAGS=-mod=mod"))
	require.NoError(t, err)
	assert.Equal(t, &Repo{
		Module: "gitlab.example.com/fork/runner",
		Helper: "./apps/gitlab-runner-helper", Runner: "./cmd/gitlab-runner", Others: []string{"./tools/gen"},
		VersionPackage: "gitlab.example.com/fork/runner/internal/more", Vars: []string{"VERSION", "REVISION", "BUILT"},
	}, r, "the package with most of the variables; a constant is not one")

	// Among equals, common first; a main package's variables never count.
	write(t, dir, map[string]string{"common/version.go": "package common\n\nvar VERSION, REVISION, BUILT string\n"})
	r, err = Inspect(t.Context(), dir, "", os.Environ())
	require.NoError(t, err)
	assert.Equal(t, "gitlab.example.com/fork/runner/common", r.VersionPackage)

	recipe, err := Recipe(r, "scratch")
	require.NoError(t, err)
	assert.Contains(t, string(recipe), "\n    -X gitlab.example.com/fork/runner/common.BUILT={{.Date}}\n")
	assert.NotContains(t, string(recipe), "common.BRANCH")
	assert.Contains(t, string(recipe), "# Not built (other main packages): ./tools/gen\n")
	assert.Equal(t, "./a, ./b, ./c, ./d, ./e and 2 more", others([]string{"./a", "./b", "./c", "./d", "./e", "./f", "./g"}))
	assert.Contains(t, string(recipe), "lacks; add an image named gitlab-runner once it has it", "no packaging dir, no runner image")
	assert.NotContains(t, string(recipe), "- name: gitlab-runner\n")

	recipe, err = Recipe(r, "registry.example.com/base/helper:1")
	require.NoError(t, err)
	assert.Contains(t, string(recipe), `args: {BASE_IMAGE: "registry.example.com/base/helper:1"}`)
	assert.NotContains(t, string(recipe), "BASE_IMAGE is scratch")

	ci := string(CI(r, "helperbuild/helperbuild", "v1.0.0", "why v1.0.0"))
	assert.Contains(t, ci, "      name: runner\n", "jobs named after the module")
	assert.Contains(t, ci, "    # why v1.0.0\n    ref: v1.0.0\n    file: ci/gitlab/release.gitlab-ci.yml\n")
	// What must exist on the user's GitLab is said where it is used
	// (issue 39: the project was included without a word).
	assert.Contains(t, ci, "  # The project helperbuild/helperbuild must exist on this GitLab, holding ref: a mirror of\n  # "+TemplateRepository+" (docs/gitlab-ci.md, \"Including the template\").\n  - project: helperbuild/helperbuild\n")
	assert.Equal(t, "gitlab-runner", jobName("gitlab.com/gitlab-org/gitlab-runner"))
	assert.Equal(t, "my-fork-2", jobName("example.com/My_Fork.2"))
	assert.Equal(t, "release", jobName("example.com/_"))

	_, err = Recipe(&Repo{Others: []string{"./cmd/a"}}, "scratch")
	assert.ErrorContains(t, err, "found main packages ./cmd/a, none named gitlab-runner-helper or gitlab-runner")
}

// The template is pinned to the helperbuild that writes the fragment: its
// release tag, else its commit; never a branch.
func TestTemplateRef(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		version, revision, ref, comment string
	}{
		{"v1.2.3", commit, "v1.2.3", "the template of helperbuild v1.2.3, which wrote this; move ref and the helperbuild version together"},
		{"v1.3.0-rc.1", "unknown", "v1.3.0-rc.1", "the template of helperbuild v1.3.0-rc.1, which wrote this; move ref and the helperbuild version together"},
		{"v1.2.3-4-g0123456", commit, commit, "the template at the commit of the development build of helperbuild (v1.2.3-4-g0123456) that wrote this; change ref to a release tag"},
		{"v1.2.3-dirty", commit, commit, "the template at the commit of the development build of helperbuild (v1.2.3-dirty) that wrote this; change ref to a release tag"},
		{"f176a8d", commit, commit, "the template at the commit of the development build of helperbuild (f176a8d) that wrote this; change ref to a release tag"},
		{"dev", strings.Repeat("ab", 32), strings.Repeat("ab", 32), "the template at the commit of the development build of helperbuild (dev) that wrote this; change ref to a release tag"},
	}
	for _, tt := range tests {
		ref, comment, err := TemplateRef(tt.version, tt.revision)
		require.NoError(t, err, tt.version)
		assert.Equal(t, tt.ref, ref, tt.version)
		assert.Equal(t, tt.comment, comment, tt.version)
	}
	for _, tt := range []struct{ version, revision string }{{"dev", "unknown"}, {"main", ""}, {"v1.2", "0123456"}, {"v1.2.3-4-g0123456", "unknown"}} {
		_, _, err := TemplateRef(tt.version, tt.revision)
		assert.EqualError(t, err, fmt.Sprintf("this helperbuild knows neither its release tag nor its commit (version %q, revision %q), so the CI fragment could only follow a branch: use a release, or build helperbuild with make build (which stamps both)", tt.version, tt.revision))
	}
}
