package rootfs

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

// build applies layers of entries in order with Add.
func build(t testing.TB, layers ...[]tartest.Entry) *FS {
	t.Helper()
	f := New()
	for i, entries := range layers {
		r := tar.NewReader(bytes.NewReader(tartest.Bytes(t, entries...)))
		for seq := 0; ; seq++ {
			hdr, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			f.Add(i, seq, hdr)
		}
	}
	return f
}

// listing prints the tree as "path type[->link]" lines.
func listing(f *FS) string {
	var b strings.Builder
	_ = f.Walk(func(p string, info Info) error {
		b.WriteString(p)
		switch info.Type {
		case tar.TypeDir:
			b.WriteString("/")
		case tar.TypeSymlink:
			b.WriteString(" -> " + info.Linkname)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}
