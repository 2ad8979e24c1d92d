package build

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"
)

// extract copies one file out of a layer into a temp file.
func extract(t *testing.T, l v1.Layer, name string) string {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s not in layer", name)
		}
		require.NoError(t, err)
		if hdr.Name != name {
			continue
		}
		require.Equal(t, int64(0o755), hdr.Mode&0o7777)
		require.Equal(t, 0, hdr.Uid)
		out := filepath.Join(t.TempDir(), filepath.Base(name))
		f, err := os.Create(out)
		require.NoError(t, err)
		_, err = io.Copy(f, tr)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		return out
	}
}
