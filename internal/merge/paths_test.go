package merge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPartPaths: a file as is, a directory to its *.json files, a glob to
// its matches, each file once in order; an argument that gives no file is
// refused naming it and the way out.
func TestPartPaths(t *testing.T) {
	dir := t.TempDir()
	arts := filepath.Join(dir, "arts [1]")
	require.NoError(t, os.Mkdir(arts, 0o755))
	for _, p := range []string{filepath.Join(arts, "a.json"), filepath.Join(arts, "b.json"), filepath.Join(arts, "notes.txt"), filepath.Join(dir, "c.json")} {
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
	}
	got, err := PartPaths([]string{filepath.Join(dir, "c.json"), arts, filepath.Join(dir, "*.json")})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "c.json"), filepath.Join(arts, "a.json"), filepath.Join(arts, "b.json")}, got)

	empty := t.TempDir()
	_, err = PartPaths([]string{empty})
	require.Error(t, err)
	assert.Equal(t, "part directory "+empty+" has no *.json files: did the jobs' artifacts reach this job (needs: / dependencies:)?", err.Error())
	_, err = PartPaths([]string{filepath.Join(dir, "missing-*.json")})
	require.Error(t, err)
	assert.Equal(t, "part "+filepath.Join(dir, "missing-*.json")+": no such file, and no file matches it as a pattern", err.Error())
}
