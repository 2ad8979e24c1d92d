package gitlabbase

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildPgrep builds the test bases' pgrep (testdata/pgrep) for goarch
// (goarm for arm) into dir and returns it; env is the environment of go build.
func BuildPgrep(ctx context.Context, dir, goarch, goarm string, env []string) ([]byte, error) {
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "testdata", "pgrep")
	out := filepath.Join(dir, "pgrep-"+goarch+goarm)
	cmd := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(append([]string{}, env...), "GOOS=linux", "GOARCH="+goarch, "GOARM="+goarm, "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build pgrep for %s: %w\n%s", goarch, err, msg)
	}
	return os.ReadFile(out)
}
