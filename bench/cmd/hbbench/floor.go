package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
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

// floorChildFlag is hbbench's hidden mode: run the floor's go builds from a
// spec file and exit (see floorChildMain).
const floorChildFlag = "floor-child"

// floorSpec is what a floor child runs: every job's go build in Dir, at
// most Jobs at a time; it writes the go builds' CPU to Result.
type floorSpec struct {
	Dir    string
	Jobs   int
	Builds []floorJob
	Result string
}

// floorJob is one platform's go build: its full environment and its
// arguments after "go".
type floorJob struct {
	Platform string
	Env      []string
	Args     []string
}

// floorResult is what a floor child reports: the user+system time of its
// go builds and of their children (compile, link), from wait4.
type floorResult struct {
	GoCPU time.Duration
}

// floorSpecOf is the floor of w: for every platform, the go build
// helperbuild runs, `go build -o OUT -trimpath -ldflags LDFLAGS PKG` with
// CGO_ENABLED=0 and the platform's GOOS/GOARCH/GOARM, into outDir (kept
// between runs, so an unchanged build is a no-op for go).
func floorSpecOf(cfg *config, w *workload, outDir, ldflags, result string) (floorSpec, error) {
	spec := floorSpec{Dir: w.Dir, Jobs: cfg.jobs, Result: result}
	for _, p := range cfg.platforms {
		env, err := buildEnv(os.Environ(), p)
		if err != nil {
			return floorSpec{}, err
		}
		out := filepath.Join(outDir, binName(w, p))
		spec.Builds = append(spec.Builds, floorJob{Platform: p, Env: env,
			Args: []string{"build", "-o", out, "-trimpath", "-ldflags", ldflags, w.Pkg}})
	}
	return spec, nil
}

// floorBuild times w's floor under the same instrument as helperbuild's
// runs: hbbench starts itself again as a floor child (-floor-child SPEC),
// which runs the go builds, and times that child with b.timed, as it times
// helperbuild: in hbbench's session, VmHWM sampled every 5 ms, the process
// tree walked every -proc-every, the registry's CPU read around it. So the
// sampling's CPU and wake-ups weigh on both sides of every comparison.
// The sample's ChildCPU is the go builds' CPU as the child counted it
// (wait4, exact), CPU the child's own (it only starts and waits).
func (b *bench) floorBuild(ctx context.Context, w *workload, outDir, ldflags string, warm bool) (sample, error) {
	specPath := filepath.Join(b.work, "floor-"+w.Key+".json")
	result := filepath.Join(b.work, "floor-"+w.Key+"-result.json")
	spec, err := floorSpecOf(b.cfg, w, outDir, ldflags, result)
	if err != nil {
		return sample{}, err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return sample{}, err
	}
	if err := os.WriteFile(specPath, data, 0o644); err != nil {
		return sample{}, err
	}
	if err := os.Remove(result); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return sample{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return sample{}, err
	}
	s, err := b.timed(ctx, proc{Dir: w.Dir, Env: os.Environ(), Args: []string{exe, "-" + floorChildFlag, specPath}}, warm)
	if err != nil {
		return sample{}, err
	}
	var res floorResult
	if data, err = os.ReadFile(result); err == nil {
		err = json.Unmarshal(data, &res)
	}
	if err != nil {
		return sample{}, fmt.Errorf("floor child's result: %w", err)
	}
	return withGoCPU(s, res.GoCPU), nil
}

// withGoCPU splits s's CPU (the child's and its go builds', from wait4)
// with the go builds' as the child counted them, rather than as last
// sampled: the last go build ends right before the child does, after the
// last 5 ms sample. The series' last point gets the child's own CPU.
func withGoCPU(s sample, goCPU time.Duration) sample {
	total := s.CPU + s.ChildCPU
	s.ChildCPU = min(goCPU, total)
	s.CPU = total - s.ChildCPU
	if n := len(s.Series); n > 0 {
		s.Series[n-1].Ticks[cpuSelf] = int64(s.CPU / clockTick)
	}
	return s
}

// floorChildMain is hbbench as a floor child: it runs the spec at path,
// writes every go build's output (and error) to stdout, which the parent
// appends to bench.log, and returns the exit code: 0 when every go build
// succeeded, 1 otherwise. An interrupt or SIGTERM kills the go builds.
func floorChildMain(path string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := floorChild(ctx, path, os.Stdout); err != nil {
		fmt.Fprintln(os.Stdout, "hbbench floor child:", err)
		return 1
	}
	return 0
}

// floorChild reads the spec at path, runs it and writes its result.
func floorChild(ctx context.Context, path string, out io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec floorSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if spec.Jobs < 1 || len(spec.Builds) == 0 || spec.Result == "" {
		return fmt.Errorf("%s: want Jobs >= 1, at least one build and a Result path", path)
	}
	cpu, err := runFloor(ctx, spec, out)
	if err != nil {
		return err
	}
	data, err = json.Marshal(floorResult{GoCPU: cpu})
	if err != nil {
		return err
	}
	return os.WriteFile(spec.Result, data, 0o644)
}

// runFloor runs spec's go builds, at most spec.Jobs at a time, and returns
// their CPU (user+sys of each go build and its children). The go builds
// stay in the child's process group, the one run gave the child: a
// timeout or an interrupt of hbbench kills that group whole, the child,
// its go builds and their compilers and linkers.
func runFloor(ctx context.Context, spec floorSpec, out io.Writer) (time.Duration, error) {
	sem := make(chan struct{}, spec.Jobs)
	errs := make([]error, len(spec.Builds))
	var outMu sync.Mutex
	var cpu atomic.Int64
	var wg sync.WaitGroup
	for i, j := range spec.Builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.CommandContext(ctx, "go", j.Args...)
			cmd.Dir, cmd.Env = spec.Dir, j.Env
			b, err := cmd.CombinedOutput()
			if ps := cmd.ProcessState; ps != nil {
				cpu.Add(int64(ps.UserTime() + ps.SystemTime()))
			}
			outMu.Lock()
			fmt.Fprintf(out, "\n$ (cd %s && GOOS/GOARCH for %s go %s)\n%s", spec.Dir, j.Platform, strings.Join(j.Args, " "), b)
			outMu.Unlock()
			if err != nil {
				errs[i] = fmt.Errorf("go build for %s: %w", j.Platform, err)
			}
		}()
	}
	wg.Wait()
	return time.Duration(cpu.Load()), errors.Join(errs...)
}
