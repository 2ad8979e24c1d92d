package verify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// bins holds the test binaries TestMain builds, by key: "amd64", "arm64"
// (hello, CGO_ENABLED=0), "arm64-liar" (arm64 hello claiming linux/amd64),
// "cgo" (hellocgo for the host, only when gcc exists), "noversion-amd64" and
// "noversion-arm64" (testdata/noversion: Go programs without --version).
// adversaries holds the path of sandboxtest's adversary for "amd64" and
// "arm64". Read-only after TestMain.
var (
	bins        = map[string][]byte{}
	adversaries = map[string]string{}
)

func TestMain(m *testing.M) {
	if code, ok := sandbox.Init(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "verify-bins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := sandboxtest.DenyIfAsked(os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if adversaries[arch], err = sandboxtest.BuildAdversary(dir, arch, os.Environ()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	builds := []struct {
		key, pkg, goarch, cgo, ldflags string
	}{
		{"amd64", "./testdata/hello", "amd64", "0", "-s -w"},
		{"arm64", "./testdata/hello", "arm64", "0", "-s -w"},
		{"arm64-liar", "./testdata/hello", "arm64", "0", "-s -w -X main.osArch=linux/amd64"},
		{"noversion-amd64", "./testdata/noversion", "amd64", "0", "-s -w"},
		{"noversion-arm64", "./testdata/noversion", "arm64", "0", "-s -w"},
	}
	if _, err := testkit.LookTool("gcc"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	builds = append(builds, struct{ key, pkg, goarch, cgo, ldflags string }{"cgo", "./testdata/hellocgo", runtime.GOARCH, "1", "-s -w"})
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, b := range builds {
		out := filepath.Join(dir, b.key)
		cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags="+b.ldflags, "-o", out, b.pkg)
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.goarch, "CGO_ENABLED="+b.cgo)
		if msg, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s for %s: %v\n%s", b.pkg, b.goarch, err, msg)
			return 1
		}
		data, err := os.ReadFile(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		bins[b.key] = data
	}
	return m.Run()
}
