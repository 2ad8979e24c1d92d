package imageref

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtractArchiveStaysInside: no archive entry writes outside the
// directory it is extracted into, whether it names a path above it, an
// absolute path, a symlink, or a path through a symlink to outside.
func TestExtractArchiveStaysInside(t *testing.T) {
	tests := []struct {
		name    string
		entries []*tar.Header
		link    string // a symlink "blobs" in dir pointing outside, when set
		want    string
	}{
		{name: "dot-dot", entries: []*tar.Header{{Name: "../escape", Typeflag: tar.TypeReg, Size: 3}}, want: "leaves the archive"},
		{name: "dot-dot inside", entries: []*tar.Header{{Name: "blobs/../../escape", Typeflag: tar.TypeReg, Size: 3}}, want: "leaves the archive"},
		{name: "absolute", entries: []*tar.Header{{Name: "/escape", Typeflag: tar.TypeReg, Size: 3}}, want: "leaves the archive"},
		{name: "symlink entry", entries: []*tar.Header{{Name: "blobs", Typeflag: tar.TypeSymlink, Linkname: "/"}}, want: "only files and directories"},
		{name: "through a symlink", link: "out", entries: []*tar.Header{{Name: "blobs/escape", Typeflag: tar.TypeReg, Size: 3}}, want: "escapes"},
		{name: "directory through a symlink", link: "out", entries: []*tar.Header{{Name: "blobs/sub/", Typeflag: tar.TypeDir, Mode: 0o755}}, want: "escapes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			dir, outside := filepath.Join(top, "dir"), filepath.Join(top, "out")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Mkdir(outside, 0o755))
			if tt.link != "" {
				require.NoError(t, os.Symlink(filepath.Join("..", tt.link), filepath.Join(dir, "blobs")))
			}
			file := filepath.Join(top, "a.tar")
			f, err := os.Create(file)
			require.NoError(t, err)
			tw := tar.NewWriter(f)
			for _, h := range tt.entries {
				require.NoError(t, tw.WriteHeader(h))
				if h.Size > 0 {
					_, err := tw.Write([]byte("bad"))
					require.NoError(t, err)
				}
			}
			require.NoError(t, tw.Close())
			require.NoError(t, f.Close())

			err = extractArchive(context.Background(), file, dir)
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.want)
			assert.ErrorContains(t, err, "corrupt archive")
			for _, p := range []string{filepath.Join(top, "escape"), filepath.Join(outside, "escape"), filepath.Join(outside, "sub"), "/escape"} {
				assert.NoFileExists(t, p)
				assert.NoDirExists(t, p)
			}
		})
	}
}
