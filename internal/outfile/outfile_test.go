package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	require.NoError(t, WriteBytes(path, []byte("old\n")))
	err := Write(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return errors.New("disk full")
	})
	require.EqualError(t, err, "disk full")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "a failed write leaves the old file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")

	require.NoError(t, WriteBytes(path, []byte("new\n")))
	got, _ = os.ReadFile(path)
	assert.Equal(t, "new\n", string(got))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Check("--dotenv x", filepath.Join(dir, "x.env")))
	assert.EqualError(t, Check("--dotenv d", dir), "--dotenv d is a directory; give a file name")
	// Missing parents are Write's to create (issue 39: push --help's
	// --part-file parts/a.json failed): Check creates none of them.
	missing := filepath.Join(dir, "no", "such", "x.env")
	require.NoError(t, Check("--dotenv m", missing))
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "the probe is removed, no parent created")
	require.NoError(t, WriteBytes(missing, []byte("A=1\n")))
	got, err := os.ReadFile(missing)
	require.NoError(t, err)
	assert.Equal(t, "A=1\n", string(got))

	file := filepath.Join(dir, "file")
	require.NoError(t, WriteBytes(file, nil))
	assert.EqualError(t, Check("--dotenv f", filepath.Join(file, "sub", "x.env")), "--dotenv f: "+file+" is not a directory")
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		assert.ErrorContains(t, Check("--dotenv r", filepath.Join(ro, "sub", "x.env")), "permission denied")
	}
}

// TestWriteJSON: indented, one newline at the end; a value JSON cannot
// hold leaves the file as it was.
func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, WriteJSON(path, map[string]any{"a": []int{1}}))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"a\": [\n    1\n  ]\n}\n", string(got))
	require.Error(t, WriteJSON(path, func() {}))
	got, _ = os.ReadFile(path)
	assert.Equal(t, "{\n  \"a\": [\n    1\n  ]\n}\n", string(got))
}
