package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// goEnv mirrors helperbuild's internal/platform.GoEnv for the platforms the
// benchmark uses, so the floor's go build hits the same cache entries.
func goEnv(p string) ([]string, error) {
	switch p {
	case "linux/amd64":
		return []string{"GOOS=linux", "GOARCH=amd64", "GOAMD64=v1"}, nil
	case "linux/arm64":
		return []string{"GOOS=linux", "GOARCH=arm64"}, nil
	case "linux/arm/v7":
		return []string{"GOOS=linux", "GOARCH=arm", "GOARM=7"}, nil
	case "linux/ppc64le":
		return []string{"GOOS=linux", "GOARCH=ppc64le"}, nil
	case "linux/s390x":
		return []string{"GOOS=linux", "GOARCH=s390x"}, nil
	}
	return nil, fmt.Errorf("platform %s: not known to the benchmark", p)
}

// buildEnv is base without target variables, then CGO_ENABLED=0, then the
// platform's variables: what helperbuild's internal/crossbuild.Env does.
func buildEnv(base []string, p string) ([]string, error) {
	pe, err := goEnv(p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOOS", "GOARCH", "GO386", "GOAMD64", "GOARM", "GOARM64", "GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM", "CGO_ENABLED":
			continue
		}
		out = append(out, kv)
	}
	return append(append(out, "CGO_ENABLED=0"), pe...), nil
}

// binName is the floor's output name for a platform.
func binName(w *workload, p string) string {
	return w.Bin + "-" + strings.ReplaceAll(p, "/", "-")
}

// floorBuild runs, for every platform, the go build helperbuild runs:
// `go build -o OUT -trimpath -ldflags LDFLAGS PKG` with CGO_ENABLED=0 and the
// platform's GOOS/GOARCH/GOARM, at most jobs at a time, into outDir (kept
// between runs, so an unchanged build is a no-op for go).
func floorBuild(ctx context.Context, cfg *config, w *workload, outDir, ldflags string, log *os.File, warm bool) (sample, error) {
	limit := cfg.timeout
	if warm {
		limit = cfg.warmTimeout // the first build compiles everything
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	sem := make(chan struct{}, cfg.jobs)
	errs := make([]error, len(cfg.platforms))
	var logMu sync.Mutex
	var cpu atomic.Int64 // user+sys of every go build and its children
	var wg sync.WaitGroup
	start := time.Now()
	for i, p := range cfg.platforms {
		env, err := buildEnv(os.Environ(), p)
		if err != nil {
			return sample{}, err
		}
		out := filepath.Join(outDir, binName(w, p))
		args := []string{"build", "-o", out, "-trimpath", "-ldflags", ldflags, w.Pkg}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.CommandContext(ctx, "go", args...)
			cmd.Dir, cmd.Env = w.Dir, env
			// Own process group, killed whole on timeout or interrupt.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			b, err := cmd.CombinedOutput()
			if ps := cmd.ProcessState; ps != nil {
				cpu.Add(int64(ps.UserTime() + ps.SystemTime()))
			}
			logMu.Lock()
			fmt.Fprintf(log, "\n$ (cd %s && GOOS/GOARCH for %s go %s)\n%s", w.Dir, p, strings.Join(args, " "), b)
			logMu.Unlock()
			if err != nil {
				errs[i] = fmt.Errorf("go build for %s: %w (log: %s)", p, err, log.Name())
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return sample{}, err
		}
	}
	return sample{Wall: wall, ChildCPU: time.Duration(cpu.Load())}, nil
}
