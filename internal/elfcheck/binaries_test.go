package elfcheck_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// crossPlatforms are the platforms the shared test binaries are built for.
var crossPlatforms = []string{
	"linux/amd64", "linux/arm64", "linux/arm/v6", "linux/arm/v7",
	"linux/ppc64le", "linux/s390x", "linux/riscv64", "linux/386",
}

// testBinaries is built once per test process, on first use, so fuzz workers
// and `-run` subsets that need no binaries do not pay for them.
var testBinaries struct {
	once    sync.Once
	dir     string
	paths   map[string]string // platform -> binary
	dynamic string            // host binary linked against libc, "" without gcc
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testBinaries.dir != "" {
		os.RemoveAll(testBinaries.dir)
	}
	os.Exit(code)
}

const helloMain = `package main

import "fmt"

func main() { fmt.Println("hello") }
`

const cgoMain = `package main

import (
	"fmt"
	"net"
	"os/user"
)

func main() {
	u, _ := user.Current()
	_, _ = net.LookupHost("localhost")
	fmt.Println(u)
}
`

// builtBinaries cross-compiles helloMain for every crossPlatforms entry (two
// builds at a time: the standard library for each GOARCH may need compiling)
// and, when gcc exists, cgoMain for the host.
func builtBinaries(t *testing.T) (map[string]string, string) {
	t.Helper()
	b := &testBinaries
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "elfcheck-test-")
		if b.err != nil {
			return
		}
		b.paths, b.err = buildAll(b.dir)
		if b.err != nil {
			return
		}
		if runtime.GOOS == "linux" {
			if _, b.err = testkit.LookTool("gcc"); b.err != nil {
				return
			}
			b.dynamic, b.err = buildCgo(b.dir)
		}
	})
	require.NoError(t, b.err)
	return b.paths, b.dynamic
}

func writeModule(dir, src string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
}

func goBuild(ctx context.Context, dir, out string, env ...string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(env, " "), err, out)
	}
	return nil
}

func buildAll(dir string) (map[string]string, error) {
	src := filepath.Join(dir, "hello")
	if err := writeModule(src, helloMain); err != nil {
		return nil, err
	}
	outs := make([]string, len(crossPlatforms))
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(2)
	for i, s := range crossPlatforms {
		g.Go(func() error {
			p, err := platform.Parse(s)
			if err != nil {
				return err
			}
			env, err := platform.GoEnv(p)
			if err != nil {
				return err
			}
			out := filepath.Join(dir, "bin", strings.ReplaceAll(s, "/", "-"))
			if err := goBuild(ctx, src, out, append(env, "CGO_ENABLED=0")...); err != nil {
				return err
			}
			outs[i] = out
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	paths := make(map[string]string, len(outs))
	for i, s := range crossPlatforms {
		paths[s] = outs[i]
	}
	return paths, nil
}

func buildCgo(dir string) (string, error) {
	src := filepath.Join(dir, "cgo")
	if err := writeModule(src, cgoMain); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "bin", "dynamic")
	return out, goBuild(context.Background(), src, out, "CGO_ENABLED=1", "GOOS=", "GOARCH=")
}

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}
