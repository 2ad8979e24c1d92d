package sandboxtest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
)

// BuildAdversary cross-compiles the adversary, static, for linux/goarch into
// dir and returns its path; environ is the environment for go (GOCACHE
// keeps the standard library compiled for the next build).
func BuildAdversary(dir, goarch string, environ []string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the adversary's source")
	}
	src := filepath.Join(filepath.Dir(self), "..", "testdata", "adversary")
	out := filepath.Join(dir, "adversary-"+goarch)
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(slices.Clip(environ), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build the adversary for %s: %v\n%s", goarch, err, msg)
	}
	return out, nil
}
