package testkit

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// helloSource prints the platform it was built for, as verify --run expects.
const helloSource = `package main

import (
	"fmt"
	"runtime"
)

func main() { fmt.Printf("OS/Arch: %s/%s\n", runtime.GOOS, runtime.GOARCH) }
`

var (
	binMu sync.Mutex
	bins  = map[string][]byte{}
)

// HelloBinary is a small static Go program for linux/GOARCH ("arm" is
// GOARM=7), built by go build (not by helperbuild) once per test process,
// in environ (the test's: a fixture reads no environment itself).
func HelloBinary(t testing.TB, environ []string, goarch string) []byte {
	t.Helper()
	return helloFor(t, environ, "linux", goarch)
}

// HelloExe is HelloBinary for windows/GOARCH: a console PE executable.
func HelloExe(t testing.TB, environ []string, goarch string) []byte {
	t.Helper()
	return helloFor(t, environ, "windows", goarch)
}

func helloFor(t testing.TB, environ []string, goos, goarch string) []byte {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	key := goos + "/" + goarch
	if b, ok := bins[key]; ok {
		return b
	}
	dir, err := os.MkdirTemp("", "testkit-hello-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, data := range map[string]string{"main.go": helloSource, "go.mod": "module hello\n\ngo 1.24\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), environ...), "GOOS="+goos, "GOARCH="+goarch, "GOARM=7", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build hello for %s: %v\n%s", key, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	bins[key] = b
	return b
}

// ArchImage is an image whose config says cfg (any platform, true or not)
// and which holds /bin/hello built for binArch (HelloBinary) and a text
// file, made with go-containerregistry's mutate alone. environ is
// HelloBinary's.
func ArchImage(t testing.TB, environ []string, cfg v1.Platform, binArch string) v1.Image {
	t.Helper()
	bin := HelloBinary(t, environ, binArch)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := []struct {
		name string
		mode int64
		data []byte
	}{{"bin/hello", 0o755, bin}, {"etc/motd", 0o644, []byte("hello from " + binArch + "\n")}}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = cfg.OS, cfg.Architecture, cfg.Variant
	cf.Config.Env = []string{"PATH=/bin", "ARCH_NOTE=" + binArch}
	cf.Config.Entrypoint = []string{"/bin/hello"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
