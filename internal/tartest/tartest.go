package tartest

import (
	"archive/tar"
	"bytes"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// Entry is one tar entry. Type is a tar.Type* flag; Body is written only for
// tar.TypeReg; Link is the symlink or hardlink target.
type Entry struct {
	Name     string
	Type     byte
	Mode     int64
	Body     []byte
	Link     string
	UID, GID int
}

// File is a regular file.
func File(name string, mode int64, body []byte) Entry {
	return Entry{Name: name, Type: tar.TypeReg, Mode: mode, Body: body}
}

// Dir is a directory.
func Dir(name string, mode int64) Entry {
	return Entry{Name: name, Type: tar.TypeDir, Mode: mode}
}

// Symlink is a symbolic link (mode 0777) to target.
func Symlink(name, target string) Entry {
	return Entry{Name: name, Type: tar.TypeSymlink, Mode: 0o777, Link: target}
}

// Hardlink is a hard link (mode 0755) to target, a path inside the archive.
func Hardlink(name, target string) Entry {
	return Entry{Name: name, Type: tar.TypeLink, Mode: 0o755, Link: target}
}

// Bytes writes entries, in order, into an uncompressed PAX tar in memory.
func Bytes(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Typeflag: e.Type, Mode: e.Mode, Linkname: e.Link, Uid: e.UID, Gid: e.GID, Format: tar.FormatPAX}
		if e.Type == tar.TypeReg {
			hdr.Size = int64(len(e.Body))
		}
		require.NoError(t, tw.WriteHeader(hdr), "tar header %s", e.Name)
		if e.Type == tar.TypeReg {
			_, err := tw.Write(e.Body)
			require.NoError(t, err, "tar body %s", e.Name)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// Layer is an uncompressed OCI layer (application/vnd.oci.image.layer.v1.tar)
// holding entries.
func Layer(t testing.TB, entries ...Entry) v1.Layer {
	t.Helper()
	return static.NewLayer(Bytes(t, entries...), types.OCIUncompressedLayer)
}

// MergedUsr is a merged-/usr base (Debian, Ubuntu: /bin -> usr/bin,
// /sbin -> /usr/sbin) plus the directories whose metadata a layer on it must
// not reset (/tmp 1777, a user's home 0700), a link out of the root, a
// symlink loop and a link to the root. Regular files hold "xx".
func MergedUsr() []Entry {
	return []Entry{
		Dir("usr/", 0o755),
		Dir("usr/bin/", 0o755),
		File("usr/bin/ls", 0o755, []byte("xx")),
		Dir("usr/sbin/", 0o755),
		Symlink("bin", "usr/bin"),
		Symlink("sbin", "/usr/sbin"),
		Dir("tmp/", 0o1777),
		Dir("home/", 0o755),
		{Name: "home/gitlab-runner/", Type: tar.TypeDir, Mode: 0o700, UID: 100, GID: 65533},
		Dir("etc/", 0o755),
		File("etc/passwd", 0o644, []byte("xx")),
		Symlink("etc/up", "../../../../opt"),
		{Name: "opt/", Type: tar.TypeDir, Mode: 0o750, UID: 7, GID: 8},
		Symlink("loop", "loop"),
		Symlink("root", "/"),
	}
}
