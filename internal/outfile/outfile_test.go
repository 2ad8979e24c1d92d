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
	missing := filepath.Join(dir, "no", "x.env")
	assert.EqualError(t, Check("--dotenv m", missing), "--dotenv m: directory "+filepath.Dir(missing)+" does not exist")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "the probe is removed")
}
