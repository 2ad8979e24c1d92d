package join

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
)

// bins are testdata/hello cross-compiled by go build (not by helperbuild),
// by GOARCH ("arm" is GOARM=7). Read-only after TestMain.
var bins = map[string][]byte{}

func TestMain(m *testing.M) {
	os.Exit(buildBins(m))
}

func buildBins(m *testing.M) int {
	dir, err := os.MkdirTemp("", "join-bins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, arch := range []string{"amd64", "arm64", "arm"} {
		out := filepath.Join(dir, arch)
		cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/hello")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "GOARM=7", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build for %s: %v\n%s", arch, err, msg)
			return 1
		}
		if bins[arch], err = os.ReadFile(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

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

// archImage is an image whose config says cfgArch (and variant) while its
// binary is built for binArch, made with go-containerregistry's mutate.
func archImage(t *testing.T, cfgArch, variant, binArch string) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, tarLayer(t, map[string][]byte{
		"bin/hello": bins[binArch], "etc/motd": []byte("hello\n"),
	}))
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = "linux", cfgArch, variant
	cf.Config.Env = []string{"PATH=/bin", "ARCH_NOTE=" + binArch}
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
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
