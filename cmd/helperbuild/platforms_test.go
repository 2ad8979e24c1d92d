package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// TestPlatformSpellings: a list is parsed as given and what each other
// spelling became is said in one line; two spellings of one platform are
// refused naming both (issue 39: both were silent).
func TestPlatformSpellings(t *testing.T) {
	for _, tt := range []struct {
		in, want, note string
	}{
		{"linux/amd64,linux/arm64", "linux/amd64,linux/arm64", ""},
		{"linux/x86_64,linux/aarch64", "linux/amd64,linux/arm64", "platforms: linux/x86_64 -> linux/amd64, linux/aarch64 -> linux/arm64"},
		{"Linux/amd64,linux/arm64/v8,linux/arm", "linux/amd64,linux/arm64,linux/arm/v7", "platforms: Linux/amd64 -> linux/amd64, linux/arm64/v8 -> linux/arm64, linux/arm -> linux/arm/v7"},
		{"linux/amd64,", "linux/amd64", `platforms: an empty item after "linux/amd64" dropped`},
		{" linux/amd64 , linux/s390x", "linux/amd64,linux/s390x", ""},
	} {
		t.Run(tt.in, func(t *testing.T) {
			ps, note, err := parsePlatformList("platforms", tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, platform.FormatList(ps))
			assert.Equal(t, tt.note, note)
		})
	}
	for in, want := range map[string]string{
		"linux/amd64,linux/x86_64":   `--platforms: linux/amd64 and linux/x86_64 are both linux/amd64; give it once`,
		"linux/arm64,linux/arm64":    `--platforms: linux/arm64 is given twice; give it once`,
		"linux/arm,linux/arm/v7":     `--platforms: linux/arm and linux/arm/v7 are both linux/arm/v7; give it once`,
		"linux/arm64/v8,Linux/arm64": `--platforms: linux/arm64/v8 and Linux/arm64 are both linux/arm64; give it once`,
	} {
		_, _, err := parsePlatformList("platforms", in)
		assert.EqualError(t, err, want, in)
	}
}

// The line goes to stderr, before anything runs; a duplicate is a usage
// error (exit 2) with nothing built.
func TestPlatformSpellingsOnTheCommandLine(t *testing.T) {
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
