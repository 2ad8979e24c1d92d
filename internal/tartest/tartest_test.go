package tartest_test

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/tartest"
)

// read parses an uncompressed tar back into entries.
func read(t *testing.T, r io.Reader) []tartest.Entry {
	t.Helper()
	var out []tartest.Entry
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		if len(body) == 0 {
			body = nil
		}
		out = append(out, tartest.Entry{Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode, Body: body, Link: hdr.Linkname, UID: hdr.Uid, GID: hdr.Gid})
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		entries []tartest.Entry
	}{
		{name: "empty"},
		{name: "constructors", entries: []tartest.Entry{
			tartest.Dir("bin/", 0o755),
			tartest.File("bin/busybox", 0o755, []byte("elf")),
			tartest.Symlink("bin/sh", "busybox"),
			tartest.Hardlink("usr/bin/git", "bin/busybox"),
			tartest.File("empty", 0o644, nil),
		}},
		{name: "literal owner and odd names", entries: []tartest.Entry{
			{Name: "home/u/", Type: tar.TypeDir, Mode: 0o1777, UID: 100, GID: 65533},
			{Name: "../escape", Type: tar.TypeReg, Mode: 0o4750, Body: []byte("x"), GID: 999},
			tartest.File(".wh.gone", 0, nil),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.entries, read(t, bytes.NewReader(tartest.Bytes(t, tt.entries...))))

			l := tartest.Layer(t, tt.entries...)
			mt, err := l.MediaType()
			require.NoError(t, err)
			assert.Equal(t, types.OCIUncompressedLayer, mt)
			rc, err := l.Uncompressed()
			require.NoError(t, err)
			defer rc.Close()
			assert.Equal(t, tt.entries, read(t, rc))
		})
	}
}
