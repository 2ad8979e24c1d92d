package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoPrintsPathsFromWhereMakeRuns: make demo's build line, run where
// make runs it (the repository root), prints layout paths that are true
// there, in the summary and in the skopeo hint (issue 39: they were
// relative to examples/gitlab-runner). One platform, to stay cheap.
func TestDemoPrintsPathsFromWhereMakeRuns(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^\t\$\(BIN\) build (.*)$`).FindStringSubmatch(string(mk))
	require.NotNil(t, line, "the Makefile's demo builds with $(BIN) build from the root")
	args := append([]string{"build"}, strings.Fields(strings.ReplaceAll(line[1], "$(DEMO_OUT)", "out/demo"))...)

	root := t.TempDir()
	ex := exampleCopy(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "examples"), 0o755))
	require.NoError(t, os.Rename(ex, filepath.Join(root, "examples", "gitlab-runner")))
	t.Chdir(root)
	code, stdout, stderr := run(t, baseEnv(), append(args, "--platforms", "linux/amd64", "--version", "v1.2.3")...)
	require.Equal(t, 0, code, stderr)
	refs := regexp.MustCompile(`oci:([^: ]+):`).FindAllStringSubmatch(stdout, -1)
	require.NotEmpty(t, refs, stdout)
	for _, m := range refs {
		assert.FileExists(t, filepath.Join(m[1], "index.json"), "%s is a layout from where make runs", m[0])
	}
	assert.Contains(t, stdout, "skopeo copy --all --preserve-digests oci:out/demo:gitlab-runner-helper:v1.2.3 docker://")
}
