package rootfs

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// tf is one tar entry of a test layer.
type tf struct {
	name     string
	typ      byte
	mode     int64
	body     []byte
	link     string
	uid, gid int
}

func file(name string, mode int64, body []byte) tf {
	return tf{name: name, typ: tar.TypeReg, mode: mode, body: body}
}
func dir(name string, mode int64) tf { return tf{name: name, typ: tar.TypeDir, mode: mode} }
func symlink(name, target string) tf {
	return tf{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}
func hardlink(name, target string) tf {
	return tf{name: name, typ: tar.TypeLink, mode: 0o755, link: target}
}

// tarBytes writes entries into an uncompressed tar, in memory (test only).
func tarBytes(t testing.TB, entries ...tf) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Uid: e.uid, Gid: e.gid, Format: tar.FormatPAX}
		if e.typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if e.typ == tar.TypeReg {
			_, err := tw.Write(e.body)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// testLayer is an uncompressed in-memory layer (keeps -race fast).
func testLayer(t testing.TB, entries ...tf) v1.Layer {
	return static.NewLayer(tarBytes(t, entries...), types.OCIUncompressedLayer)
}

// build applies layers of entries in order with Add.
func build(t testing.TB, layers ...[]tf) *FS {
	t.Helper()
	f := New()
	for i, entries := range layers {
		r := tar.NewReader(bytes.NewReader(tarBytes(t, entries...)))
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
