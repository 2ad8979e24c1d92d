package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The typos of issue 25, each answered with the way out and exit 2.
func TestTypoSuggestions(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"biuld"}, `unknown command "biuld"; did you mean build?`},
		{[]string{"verfy", "x"}, "did you mean verify?"},
		// issue 39: a flag after the mistyped command is the command's,
		// not the root's: the answer is the command, not "unknown flag".
		{[]string{"biuld", "--platforms", "linux/amd64"}, `unknown command "biuld"; did you mean build?`},
		{[]string{"pussh", "--tag=x", "./cmd/app"}, `unknown command "pussh"; did you mean push?`},
		{[]string{"frobnicate", "--platforms", "linux/amd64"}, `unknown command "frobnicate" (see helperbuild --help)`},
		{[]string{"build", "--platfroms", "linux/amd64"}, "unknown flag: --platfroms; did you mean --platforms?"},
		{[]string{"push", "--release-platfomrs=linux/amd64"}, "did you mean --release-platforms?"},
		// -v before the command is not --version (it printed the version
		// and built nothing): it is refused and put where it belongs.
		{[]string{"-v", "build"}, "-v (--verbose) goes after the command, e.g. helperbuild build -v"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, nil, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.want)
		})
	}
	// Nothing close: no guess.
	_, _, stderr := run(t, nil, "build", "--colour")
	assert.NotContains(t, stderr, "did you mean")
	code, stdout, _ := run(t, nil, "--version")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "Version:")
}

// walk calls fn for every command of the tree but cobra's own (help,
// completion and its shells, __complete).
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		if sub.Name() != "help" && sub.Name() != "completion" && !sub.Hidden {
			walk(sub, fn)
		}
	}
}

// Every command shows examples, and every example parses: the command
// exists, each flag is one of its flags with a valid value, the
// arguments are what the command takes.
func TestExamplesParse(t *testing.T) {
	n := 0
	walk(NewRootCmd(nil), func(c *cobra.Command) {
		if !assert.NotEmpty(t, c.Example, "%s has no Examples:", c.CommandPath()) {
			return
		}
		for _, line := range strings.Split(c.Example, "\n") {
			fields := strings.Fields(line)
			require.Equal(t, "helperbuild", fields[0], "example %q", line)
			for i, f := range fields {
				fields[i] = strings.Trim(f, `"`)
			}
			cmd, rest, err := NewRootCmd(nil).Find(fields[1:])
			require.NoError(t, err, line)
			if c.HasParent() { // the root's examples show the commands
				require.Equal(t, c.CommandPath(), cmd.CommandPath(), "example %q runs another command", line)
			}
			require.NoError(t, cmd.ParseFlags(rest), "example %q", line)
			if cmd.Args != nil {
				require.NoError(t, cmd.Args(cmd, cmd.Flags().Args()), "example %q", line)
			}
			n++
		}
	})
	assert.GreaterOrEqual(t, n, 12)
}

func TestHelpShowsOnlyAcceptedFlags(t *testing.T) {
	_, buildHelp, _ := run(t, nil, "build", "--help")
	assert.NotContains(t, buildHelp, "--repo", "build refuses --repo")
	assert.Contains(t, buildHelp, "Examples:")
	_, pushHelp, _ := run(t, nil, "push", "--help")
	assert.Contains(t, pushHelp, "--repo string")
	// Refused with the way out, not as an unknown flag.
	code, _, stderr := run(t, nil, "build", "--repo", "registry.example.com/g", "./cmd/app")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--repo names where push publishes")
	_, verifyHelp, _ := run(t, nil, "verify", "--help")
	assert.Contains(t, verifyHelp, "--nodes FILE ")
	assert.NotContains(t, verifyHelp, "kubectl get nodes -o json   FILE")
	_, rootHelp, _ := run(t, nil, "--help")
	assert.NotContains(t, rootHelp, "-v, --version")
}

func TestCompletionEnumerableFlags(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644))
	config := filepath.Join(dir, "helperbuild.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`platforms: [linux/amd64]
binaries:
  - main: ./cmd/app
    output: app
images:
  - name: gitlab-runner-helper
    dockerfile: Dockerfile
  - name: gitlab-runner
    dockerfile: Dockerfile
`), 0o644))
	for _, tt := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"push", "--attest", ""}, []string{"index", "referrers", "none"}, ":4"},
		{[]string{"build", "--provenance", "m"}, []string{"min", "max"}, ":4"},
		{[]string{"build", "--output", ""}, []string{"oci:", "oci-archive:"}, ":6"},
		{[]string{"build", "--output", "oci-a"}, []string{"oci-archive:"}, ":6"},
		{[]string{"push", "--config", config, "--image", ""}, []string{"gitlab-runner-helper", "gitlab-runner"}, ":4"},
		{[]string{"build", "--config", config, "--image", "gitlab-runner-"}, []string{"gitlab-runner-helper"}, ":4"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, directive := complete(t, tt.args...)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.directive, directive)
		})
	}
	// No recipe: an error, not an empty list that looks like "no images".
	_, directive := complete(t, "build", "--config", filepath.Join(dir, "missing.yaml"), "--image", "")
	assert.Equal(t, ":1", directive)
}
