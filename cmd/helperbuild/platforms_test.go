package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The line goes to stderr, before anything runs; a duplicate is a usage
// error (exit 2) with nothing built.
func TestPlatformSpellings(t *testing.T) {
	code, stdout, stderr := run(t, nil, "verify", "--platforms", "linux/x86_64,linux/amd64", "oci:/nonexistent")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--platforms: linux/x86_64 and linux/amd64 are both linux/amd64; give it once")

	dir := t.TempDir()
	t.Chdir(dir)
	code, _, stderr = run(t, baseEnv(), "build", "--platforms", "linux/x86_64", "--base", "scratch", "./nothing")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "platforms: linux/x86_64 -> linux/amd64\n")
}
