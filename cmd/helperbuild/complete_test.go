package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/progress"
)

// complete asks cobra's hidden __complete command, as the shell scripts do,
// and returns the candidates (descriptions cut off) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, stdout, stderr := run(t, nil, append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var out []string
	for _, l := range lines[:len(lines)-1] {
		c, _, _ := strings.Cut(l, "\t")
		out = append(out, c)
	}
	return out, lines[len(lines)-1]
}

func TestCompletion(t *testing.T) {
	const noFiles, noSpaceNoFiles = ":4", ":6"
	tests := []struct {
		args      []string
		want      []string // exactly these
		contains  []string
		excludes  []string
		directive string
	}{
		{args: []string{"verify", "--contract", ""}, want: []string{"helper", "runner"}, directive: noFiles},
		{args: []string{"verify", "--contract", "r"}, want: []string{"runner"}, directive: noFiles},
		{args: []string{"verify", "--format", ""}, want: []string{"table", "json"}, directive: noFiles},
		{args: []string{"build", "--compression-level", ""}, want: []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, directive: noFiles},
		{args: []string{"push", "--compression-level", "9"}, want: []string{"9"}, directive: noFiles},
		{args: []string{"build", "--platforms", ""}, contains: []string{"all", "linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x", "linux/riscv64"}, directive: noSpaceNoFiles},
		{args: []string{"verify", "--platforms", ""}, contains: []string{"linux/amd64"}, excludes: []string{"all"}, directive: noSpaceNoFiles},
		{args: []string{"push", "--platforms", "linux/arm"}, want: []string{"linux/arm/v5", "linux/arm/v6", "linux/arm/v7", "linux/arm64"}, directive: noSpaceNoFiles},
		// A comma-separated list completes its last element, without repeating one.
		{args: []string{"build", "--platforms", "linux/amd64,linux/ar"}, want: []string{"linux/amd64,linux/arm/v5", "linux/amd64,linux/arm/v6", "linux/amd64,linux/arm/v7", "linux/amd64,linux/arm64"}, directive: noSpaceNoFiles},
		{args: []string{"build", "--platforms", "linux/arm64,linux/amd64,"}, contains: []string{"linux/arm64,linux/amd64,linux/s390x"}, excludes: []string{"linux/arm64,linux/amd64,linux/arm64", "linux/arm64,linux/amd64,all"}, directive: noSpaceNoFiles},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, directive := complete(t, tt.args...)
			assert.Equal(t, tt.directive, directive)
			if tt.want != nil {
				assert.Equal(t, tt.want, got)
			}
			for _, c := range tt.contains {
				assert.Contains(t, got, c)
			}
			for _, c := range tt.excludes {
				assert.NotContains(t, got, c)
			}
		})
	}
}

// TestProgressCompletion: every command that takes --progress completes
// its modes (the flag's register function registers the completion, so a
// command cannot have one without the other).
func TestProgressCompletion(t *testing.T) {
	var with []string
	for _, c := range newRootCmd(Env{}, nil).Commands() {
		if c.Flags().Lookup("progress") != nil {
			with = append(with, c.Name())
		}
	}
	require.Subset(t, with, []string{"build", "push", "merge"})
	for _, name := range with {
		got, directive := complete(t, name, "--progress", "")
		assert.Equal(t, progress.Modes, got, name)
		assert.Equal(t, ":4", directive, name)
		got, _ = complete(t, name, "--progress", "q")
		assert.Equal(t, []string{"quiet"}, got, name)
	}
}

func TestVersionFlag(t *testing.T) {
	code, want, _ := run(t, nil, "version")
	require.Equal(t, 0, code)
	code, got, stderr := run(t, nil, "--version")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, want, got, "--version prints what version prints")
	// -v is each command's --verbose, never the version (issue 25:
	// "helperbuild -v build" printed the version and built nothing).
	code, got, _ = run(t, nil, "-v")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, got)
}
