package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configFreeModule writes a module (path module) with main packages at
// its root and at ./cmd/hello, and chdirs into it.
func configFreeModule(t *testing.T, module string) string {
	t.Helper()
	dir := t.TempDir()
	main := []byte("package main\n\nfunc main() {}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), main, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "hello"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "hello", "main.go"), main, 0o644))
	t.Chdir(dir)
	return dir
}

// TestConfigFreeDefaults: like ko, config-free mode needs only the
// package (issue 39): the base defaults to scratch, the binary is named
// after the package's directory (the module's last element for "."), and
// an absolute path inside the directory helperbuild runs in is that
// package.
func TestConfigFreeDefaults(t *testing.T) {
	dir := configFreeModule(t, "example.com/group/tiny/v2")
	for _, tt := range []struct {
		pkg, name, main string
	}{
		{"./cmd/hello", "hello", "./cmd/hello"},
		{".", "tiny", "."},
		{filepath.Join(dir, "cmd", "hello"), "hello", "./cmd/hello"},
		{dir, "tiny", "."},
	} {
		t.Run(tt.pkg, func(t *testing.T) {
			r, code, stderr := prepared(t, []string{"build", "--platforms", "linux/amd64", tt.pkg})
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, "scratch", r.Package.Base)
			assert.True(t, r.Package.DefaultBase)
			assert.Equal(t, tt.main, r.Package.Main)
			require.Len(t, r.Plan.Images, 1)
			assert.Equal(t, tt.name, r.Plan.Images[0].Name)
			assert.Contains(t, string(r.Plan.Images[0].DockerfileData), `ENTRYPOINT ["/usr/bin/`+tt.name+`"]`, "on scratch the binary is the entrypoint")
		})
	}
	r, code, stderr := prepared(t, []string{"build", "--platforms", "linux/amd64", "--base", "scratch", "."})
	require.Equal(t, 0, code, stderr)
	assert.False(t, r.Package.DefaultBase, "given, not defaulted")

	outside := t.TempDir()
	_, code, stderr = prepared(t, []string{"build", "--platforms", "linux/amd64", outside})
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "package "+outside+" is outside "+dir)

	_, code, stderr = prepared(t, []string{"build", "--platforms", "linux/amd64", "./cmd/nothing"})
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "package ./cmd/nothing: no such directory in "+dir)

	_, code, stderr = prepared(t, []string{"build", "./cmd/hello"})
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "scratch (the default base) offers none")
}

// TestConfigFreeDefaultBaseSaid: a build on the default base runs and its
// summary says the base was chosen, and what --base would add.
func TestConfigFreeDefaultBaseSaid(t *testing.T) {
	configFreeModule(t, "example.com/tiny")
	code, stdout, stderr := run(t, baseEnv(), "build", "--platforms", "linux/amd64", "--output", "oci:out", ".")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "oci:out:latest@sha256:")
	assert.Contains(t, stdout, "\n  base: scratch (default; give --base for a shell, CA certificates, a user)\n")
	code, stdout, stderr = run(t, baseEnv(), "build", "--platforms", "linux/amd64", "--base", "scratch", "--output", "oci:out2", ".")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "base:")
}
