// Command hbbench measures helperbuild against its floor (the bare go builds
// it runs) and against ko, on this machine, in one run, and prints one table
// of medians and ratios. scripts/bench.sh runs it; see docs/bench-*.md.
//
// Everything it starts (a docker-registry on 127.0.0.1, a counting proxy in
// this process, the commands it times) is stopped before it returns; every
// loop is bounded by a run count and every command by a timeout.
//
// Every timed command carries the same instrument: helperbuild, ko and the
// floor alike are started in hbbench's session, in a process group of
// their own, their VmHWM read every 5 ms and their process tree walked
// every -proc-every, behind the counting proxy. For the floor, hbbench
// starts itself again (-floor-child SPEC) to run the go builds, so the
// sampling's cost counts against the floor as it does against helperbuild.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	repo            string        // helperbuild checkout (module root)
	runs            int           // measured runs per step
	noopPairs       int           // no-op pairs per mode after the rounds (noop.go)
	warmups         int           // untimed runs before a step
	jobs            int           // --jobs and floor parallelism
	platforms       []string      // the release's platforms
	memPlatforms    []string      // platforms of the memory comparison
	workloads       []string      // example, mid, bigmain
	koVersion       string        // "" or "none": no ko
	ab              string        // another helperbuild binary, pushed with in every round beside this checkout's (A/B)
	koSBOM          string        // ko's --sbom: spdx (beside helperbuild's default attestations) or none
	memory          bool          // run the 60 MB / 120 MB memory comparison
	busy            int           // busy loops beside every timed command of the busy rounds; 0: idle only
	busySession     string        // busyOwn: each busy loop in a session of its own; busyShared: in hbbench's
	registrySession string        // busyOwn: the registry in a session of its own; busyShared: in hbbench's
	registryDelay   time.Duration // the counting proxy holds every request this long before forwarding it
	procEvery       time.Duration // how often each timed command's process tree is walked for its CPU; 0: never
	hugeMB          int           // size of the blob embedded in bigmain/huge
	out             string        // also write the markdown report here
	keep            bool          // keep the work directory
	timeout         time.Duration
	warmTimeout     time.Duration
}

func main() {
	cfg := &config{}
	var platforms, memPlatforms, workloads string
	flag.StringVar(&cfg.repo, "repo", "..", "helperbuild checkout (its module root)")
	flag.IntVar(&cfg.runs, "runs", 5, "measured runs per step (the median is reported)")
	flag.IntVar(&cfg.noopPairs, "noop-pairs", 10, "after the rounds, time this many pairs of go's no-op build and helperbuild's unchanged re-push, one right after the other, in each mode (idle, busy), for the no-op's median and its interval; 0: none")
	flag.IntVar(&cfg.warmups, "warmups", 1, "untimed warm-up runs before each step")
	flag.IntVar(&cfg.jobs, "jobs", runtime.NumCPU(), "parallel builds (helperbuild --jobs, ko --jobs, floor)")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x", "release platforms")
	flag.StringVar(&memPlatforms, "mem-platforms", "linux/amd64,linux/arm64", "platforms of the memory comparison")
	flag.StringVar(&workloads, "workloads", "example,mid,held,bigmain", "workloads: example (examples/gitlab-runner helper), mid (bench/bigmain/mid, 12 MB, on a busybox base), held (bench/bigmain/held, 11 MB, on a busybox base: issue 41's held-out-like program), bigmain (bench/bigmain, 48 MB)")
	flag.StringVar(&cfg.koVersion, "ko", "v0.19.1", `ko version to install from the Go module proxy into a temporary GOBIN; "none" skips ko`)
	flag.StringVar(&cfg.koSBOM, "ko-sbom", "spdx", "ko's --sbom: spdx (an SBOM per platform, like helperbuild's default attestations) or none")
	flag.StringVar(&cfg.ab, "ab", "", "another helperbuild binary (B, e.g. main's): every round also pushes with it, next to this checkout's push (A), the two swapping places every other round; the report compares them")
	flag.BoolVar(&cfg.memory, "memory", true, "run the peak-memory comparison (bigmain vs bigmain/huge)")
	flag.IntVar(&cfg.busy, "busy", runtime.NumCPU(), "in each round, run every release step again beside this many busy loops (one per CPU by default); 0: idle only")
	flag.StringVar(&cfg.busySession, "busy-session", busyOwn, `where the busy loops run: "own" (each in a session of its own, so an autogroup of its own: the load of another user or job) or "shared" (in hbbench's session, the timed command's autogroup: the bench before issue 41)`)
	flag.StringVar(&cfg.registrySession, "registry-session", busyShared, `where the registry runs: "shared" (hbbench's session, so the timed command's: its CPU comes out of the command's share beside busy loops of their own) or "own" (a session of its own, as a registry on another host takes nothing from the command)`)
	flag.DurationVar(&cfg.registryDelay, "registry-delay", 0, "hold every registry request this long in the counting proxy before forwarding it, as a network round trip would (e.g. 30ms, about gitlab.com's); applies to helperbuild and ko alike; 0: none")
	flag.DurationVar(&cfg.procEvery, "proc-every", 100*time.Millisecond, "walk each timed command's process tree this often for the CPU by process (costs hbbench CPU in the command's session); 0: not")
	flag.IntVar(&cfg.hugeMB, "huge-mib", 70, "MiB of incompressible bytes embedded in bigmain/huge (48 MB + 70 MiB = about 120 MB)")
	flag.StringVar(&cfg.out, "out", "", "also write the report (markdown) to this file")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work directory (logs, layouts)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "limit for one measured command")
	flag.DurationVar(&cfg.warmTimeout, "warm-timeout", 45*time.Minute, "limit for one warm-up command (first builds compile everything)")
	floorSpec := flag.String(floorChildFlag, "", "internal: run the floor's go builds from this spec file and exit; hbbench starts itself so to time the floor under the same instrument as helperbuild (5 ms RSS sampling, -proc-every tree walks, in hbbench's session)")
	flag.Parse()
	if *floorSpec != "" {
		os.Exit(floorChildMain(*floorSpec))
	}
	cfg.platforms = splitList(platforms)
	cfg.memPlatforms = splitList(memPlatforms)
	cfg.workloads = splitList(workloads)
	if cfg.runs < 1 || cfg.runs > 50 || cfg.noopPairs < 0 || cfg.noopPairs > 200 || cfg.warmups < 0 || cfg.warmups > 5 || cfg.jobs < 1 || cfg.busy < 0 || cfg.busy > 64 || cfg.registryDelay < 0 || cfg.registryDelay > time.Minute {
		fmt.Fprintln(os.Stderr, "hbbench: want 1 <= -runs <= 50, 0 <= -noop-pairs <= 200, 0 <= -warmups <= 5, -jobs >= 1, 0 <= -busy <= 64, 0 <= -registry-delay <= 1m")
		os.Exit(2)
	}
	if cfg.registrySession != busyOwn && cfg.registrySession != busyShared {
		fmt.Fprintf(os.Stderr, "hbbench: -registry-session %q: want %s or %s\n", cfg.registrySession, busyOwn, busyShared)
		os.Exit(2)
	}
	if cfg.busySession != busyOwn && cfg.busySession != busyShared {
		fmt.Fprintf(os.Stderr, "hbbench: -busy-session %q: want %s or %s\n", cfg.busySession, busyOwn, busyShared)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := benchmark(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "hbbench:", err)
		stop()
		os.Exit(1)
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// benchmark sets up (tools, registry, proxy, base), runs every step and
// prints the report; deferred calls stop what it started.
func benchmark(ctx context.Context, cfg *config) (err error) {
	repo, err := filepath.Abs(cfg.repo)
	if err != nil {
		return err
	}
	cfg.repo = repo
	work, err := os.MkdirTemp("", "hbbench-")
	if err != nil {
		return err
	}
	defer func() { cleanWork(cfg.keep, work, err) }()
	b := &bench{cfg: cfg, work: work, start: time.Now()}
	if b.log, err = os.Create(filepath.Join(work, "bench.log")); err != nil {
		return err
	}
	defer b.log.Close()
	b.progress("work directory %s (command output in bench.log)", work)

	b.tools(ctx)

	reg, err := startRegistry(ctx, work, cfg.registrySession == busyOwn)
	if err != nil {
		return err
	}
	defer reg.Stop()
	b.reg = reg
	var reqLog io.Writer // every registry request, beside the commands' output
	if cfg.keep {
		reqLog = b.log
	}
	b.proxy, err = startProxy(reg.Addr, reqLog, cfg.registryDelay)
	if err != nil {
		return err
	}
	defer b.proxy.Stop()
	b.host = "localhost:" + strings.TrimPrefix(b.proxy.Addr, "127.0.0.1:")
	b.base = b.host + "/base/tiny:1"
	b.busybox = b.host + "/base/busybox:1"
	if err := b.pushBase(ctx); err != nil {
		return err
	}
	b.progress("registry %s (storage %s), counting proxy %s, base %s", reg.Addr, reg.Storage, b.proxy.Addr, b.base)

	for _, name := range cfg.workloads {
		w, err := b.workload(name)
		if err != nil {
			return err
		}
		if err := b.releaseSteps(ctx, w); err != nil {
			return err
		}
	}
	if cfg.memory {
		if err := b.memorySteps(ctx); err != nil {
			return err
		}
	}
	b.facts.loadEnd = firstLine(readFile("/proc/loadavg"))
	report := b.report()
	fmt.Print(report)
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(report), 0o644); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// cleanWork removes the work directory after a run: all of it after a
// success, all but the logs after a failure (registry storage and binaries
// can be GBs), nothing with --keep.
func cleanWork(keep bool, work string, err error) {
	switch {
	case keep:
		fmt.Fprintf(os.Stderr, "hbbench: work directory kept: %s\n", work)
	case err != nil:
		entries, _ := os.ReadDir(work)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".log") {
				_ = os.RemoveAll(filepath.Join(work, e.Name()))
			}
		}
		fmt.Fprintf(os.Stderr, "hbbench: logs kept in %s\n", work)
	default:
		_ = os.RemoveAll(work)
	}
}

// tools records the machine's facts and builds or installs the tools the
// steps compare (helperbuild from the checkout, ko); a tool that fails is
// recorded, its steps are skipped.
func (b *bench) tools(ctx context.Context) {
	repo := b.cfg.repo
	b.facts.goVersion = firstLine(b.output(ctx, repo, "go", "version"))
	b.facts.cpus = runtime.NumCPU()
	b.facts.load = firstLine(readFile("/proc/loadavg"))

	b.helperbuild, b.hbErr = b.buildHelperbuild(ctx)
	if b.hbErr == nil {
		b.facts.hbVersion = strings.Join(strings.Fields(b.output(ctx, repo, b.helperbuild, "version")), " ")
		if rev := firstLine(b.output(ctx, repo, "git", "rev-parse", "--short", "HEAD")); rev != "" {
			changed := len(strings.Fields(b.output(ctx, repo, "git", "status", "--porcelain", "--untracked-files=no")))
			b.facts.hbVersion += fmt.Sprintf(" (built from checkout %s, %d tracked files changed)", rev, changed/2)
		}
	}
	b.ko, b.koErr = b.installKo(ctx)
	if b.koErr == nil {
		b.facts.koVersion = firstLine(b.output(ctx, b.work, b.ko, "version"))
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

var errSkipped = errors.New("skipped")
