package testkit

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// ForeignReads counts attempts to read a WindowsBase's foreign layer; a
// test asserts it stays zero.
type ForeignReads struct{ n atomic.Int64 }

// Load is how many reads were attempted.
func (f *ForeignReads) Load() int64 { return f.n.Load() }

// foreignLayer stands for a Windows OS layer on Microsoft's servers: its
// digest, diff ID and size are known from the manifest and config, its
// bytes are nowhere (the URL is a closed loopback port).
type foreignLayer struct {
	digest, diffID v1.Hash
	reads          *ForeignReads
}

var _ v1.Layer = (*foreignLayer)(nil)

func (l *foreignLayer) Digest() (v1.Hash, error)             { return l.digest, nil }
func (l *foreignLayer) DiffID() (v1.Hash, error)             { return l.diffID, nil }
func (l *foreignLayer) Size() (int64, error)                 { return 123456789, nil }
func (l *foreignLayer) MediaType() (types.MediaType, error)  { return types.DockerForeignLayer, nil }
func (l *foreignLayer) Compressed() (io.ReadCloser, error)   { return nil, l.read() }
func (l *foreignLayer) Uncompressed() (io.ReadCloser, error) { return nil, l.read() }
func (l *foreignLayer) URLs() []string                       { return []string{ForeignURL(l.digest)} }
func (l *foreignLayer) read() error {
	if l.reads != nil {
		l.reads.n.Add(1)
	}
	return errors.New("testkit: a foreign layer was read")
}

// ForeignURL is where a WindowsBase says its foreign layer lives: a
// loopback port nothing listens on (go-containerregistry even refuses to
// fetch a layer URL on a private address), so no read can leave the host.
func ForeignURL(d v1.Hash) string { return "http://127.0.0.1:1/mcr/blobs/" + d.String() }

func hashOf(s string) v1.Hash {
	sum := sha256.Sum256([]byte(s))
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sum)}
}

// WindowsBase is a Windows-like base image: config os windows, amd64,
// os.version osVersion (e.g. "10.0.20348.2340"), PATH as Windows sets it; a
// foreign layer (Docker's foreign media type, with a URL nothing serves,
// digests derived from osVersion) first, then a small real layer in the
// Windows layer format (Files/, Hives/). Reads of the foreign layer are
// counted in reads (may be nil).
func WindowsBase(t testing.TB, osVersion string, reads *ForeignReads) v1.Image {
	t.Helper()
	foreign := &foreignLayer{digest: hashOf("foreign blob " + osVersion), diffID: hashOf("foreign tar " + osVersion), reads: reads}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "Files/", Typeflag: tar.TypeDir, Mode: 0o555, Format: tar.FormatPAX},
		{Name: "Files/Windows/", Typeflag: tar.TypeDir, Mode: 0o555, Format: tar.FormatPAX},
		{Name: "Files/Windows/build.txt", Typeflag: tar.TypeReg, Mode: 0o444, Size: int64(len(osVersion)), Format: tar.FormatPAX},
		{Name: "Hives/", Typeflag: tar.TypeDir, Mode: 0o555, Format: tar.FormatPAX},
	} {
		require.NoError(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write([]byte(osVersion))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	real := static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer)
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img,
		mutate.Addendum{Layer: foreign, MediaType: types.DockerForeignLayer, URLs: foreign.URLs()},
		mutate.Addendum{Layer: real, MediaType: types.OCIUncompressedLayer},
	)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.OSVersion = "windows", "amd64", osVersion
	cf.Config.Env = []string{`PATH=C:\Windows\system32;C:\Windows`}
	cf.Config.Cmd = []string{`c:\windows\system32\cmd.exe`}
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

// WindowsIndex is an OCI index of one WindowsBase per OS version, each
// listed as windows/amd64 with its os.version, after one Image per Linux
// platform in linux.
func WindowsIndex(t testing.TB, reads *ForeignReads, osVersions []string, linux ...v1.Platform) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range linux {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: Image(t, p, 64, 1), Descriptor: v1.Descriptor{Platform: &p}})
	}
	for _, v := range osVersions {
		p := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: v}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: WindowsBase(t, v, reads), Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}

// WindowsHelper is a Windows helper image as GitLab publishes one per
// Windows release: base's layers (a WindowsBase), then a layer in the
// Windows layer format holding Files/helper/hello.exe (HelloExe for
// amd64, built in environ). baseRef, when not "", is named with base's
// digest in the manifest's org.opencontainers.image.base.name and
// .base.digest annotations. edit, when not nil, changes the config (a
// wrong os or os.version).
func WindowsHelper(t testing.TB, environ []string, base v1.Image, baseRef string, edit func(*v1.ConfigFile)) v1.Image {
	t.Helper()
	exe := HelloExe(t, environ, "amd64")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "Files/helper/", Typeflag: tar.TypeDir, Mode: 0o555, Format: tar.FormatPAX},
		{Name: "Files/helper/hello.exe", Typeflag: tar.TypeReg, Mode: 0o555, Size: int64(len(exe)), Format: tar.FormatPAX},
	} {
		require.NoError(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write(exe)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	img, err := mutate.Append(base, mutate.Addendum{Layer: static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer), MediaType: types.OCIUncompressedLayer})
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.Config.Entrypoint = []string{`C:\helper\hello.exe`}
	if edit != nil {
		edit(cf)
	}
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	if baseRef != "" {
		d, err := base.Digest()
		require.NoError(t, err)
		img = mutate.Annotations(img, map[string]string{
			"org.opencontainers.image.base.name":   baseRef,
			"org.opencontainers.image.base.digest": d.String(),
		}).(v1.Image)
	}
	return img
}
