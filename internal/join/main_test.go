package join

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// tarLayer is a layer holding files (path -> contents), each mode 0755.
func tarLayer(t *testing.T, files map[string][]byte) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range []string{"bin/hello", "etc/motd", "usr/bin/tool"} {
		data, ok := files[p]
		if !ok {
			continue
		}
		mode := int64(0o755)
		if p == "etc/motd" {
			mode = 0o644
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: p, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	require.NoError(t, err)
	return l
}

// archImage is testkit.ArchImage with the config's platform spelled out.
func archImage(t *testing.T, cfgArch, variant, binArch string) v1.Image {
	return testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: cfgArch, Variant: variant}, binArch)
}

// push writes img to host/repo:tag and returns the reference.
func push(t *testing.T, host, repo, tag string, img v1.Image) string {
	t.Helper()
	ref := fmt.Sprintf("%s/%s:%s", host, repo, tag)
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img))
	return ref
}
