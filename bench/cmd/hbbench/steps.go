package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const epoch = "1700000000" // SOURCE_DATE_EPOCH for helperbuild and ko

// step is one thing to time; run is called once per round.
type step struct {
	name    string
	run     func(warm bool) (sample, error)
	samples []sample
}

// rounds runs every step once per round, in order: first cfg.warmups
// untimed rounds, then cfg.runs measured ones. Interleaving the steps means
// a burst of other work on the machine hits all of them alike, and the
// ratios can be taken per round.
func (b *bench) rounds(ctx context.Context, what string, steps []*step) error {
	total := b.cfg.warmups + b.cfg.runs
	for r := range total {
		warm := r < b.cfg.warmups
		label := fmt.Sprintf("round %d/%d", r+1-b.cfg.warmups, b.cfg.runs)
		if warm {
			label = fmt.Sprintf("warm-up %d/%d", r+1, b.cfg.warmups)
		}
		for _, s := range steps {
			if err := ctx.Err(); err != nil {
				return err
			}
			x, err := s.run(warm)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", what, s.name, err)
			}
			b.progress("%s %s: %s %s%s", what, label, s.name, fmtDur(x.Wall), sampleExtra(x))
			if !warm {
				s.samples = append(s.samples, x)
			}
		}
	}
	return nil
}

func sampleExtra(s sample) string {
	var parts []string
	if s.PeakRSS > 0 {
		parts = append(parts, "peak RSS "+fmtMiB(s.PeakRSS))
	}
	if s.Up != (counts{}) {
		parts = append(parts, fmt.Sprintf("uploaded %s in %d blobs", fmtBytes(s.Up.BlobBytes), s.Up.BlobUploads))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// timed runs p, with the proxy's counters read around it.
func (b *bench) timed(ctx context.Context, p proc, warm bool) (sample, error) {
	p.Log, p.RSS = b.log, true
	p.Timeout = b.cfg.timeout
	if warm {
		p.Timeout = b.cfg.warmTimeout
	}
	before := b.proxy.snapshot()
	s, err := run(ctx, p)
	s.Up = b.proxy.snapshot().sub(before)
	return s, err
}

// hbArgs is a helperbuild build or push command line for w.
func (b *bench) hbArgs(verb string, w *workload, platforms []string, ldflags string, dest ...string) []string {
	args := []string{b.helperbuild, verb, w.Pkg,
		"--base", b.base, "--platforms", strings.Join(platforms, ","),
		"--jobs", fmt.Sprint(b.cfg.jobs), "--ldflags", ldflags,
		"--version", "v0.0.0-bench", "--revision", "0000000000000000000000000000000000000000",
		"--branch", "main", "--source", "https://example.com/bench",
		"--binary-name", w.Bin,
		// helperbuild keeps binaries and layers between runs; a cache of
		// the benchmark's own starts cold (the warm-up fills it) and is
		// removed with the work directory.
		"--cache-dir", filepath.Join(b.work, "helperbuild-cache")}
	return append(args, dest...)
}

func (b *bench) hbEnv() []string {
	return append(os.Environ(), "SOURCE_DATE_EPOCH="+epoch)
}

// releaseSteps measures, in interleaved rounds, the floor (full and no-op),
// helperbuild build, push and no-op push, and ko for one workload, and adds
// the rows.
func (b *bench) releaseSteps(ctx context.Context, w *workload) error {
	cfg := b.cfg
	floorDir := filepath.Join(b.work, "floor-"+w.Key)
	x := func(id string) string { return "-X " + w.XVar + "=bench-" + id }

	// The floor: what helperbuild runs, run directly; a new -X each round
	// relinks, the same -X again is go's no-op.
	var floorX string
	floorFull := &step{name: "floor go build, link reruns", run: func(warm bool) (sample, error) {
		floorX = x(b.runID())
		return floorBuild(ctx, cfg, w, floorDir, floorX, b.log, warm)
	}}
	floorNoop := &step{name: "floor go build, nothing changed", run: func(warm bool) (sample, error) {
		return floorBuild(ctx, cfg, w, floorDir, floorX, b.log, warm)
	}}
	steps := []*step{floorFull, floorNoop}

	var hbBuild, hbPush, hbNoop *step
	if b.hbErr == nil {
		layout := filepath.Join(b.work, "oci-"+w.Key)
		hbBuild = &step{name: "helperbuild build", run: func(warm bool) (sample, error) {
			if err := os.RemoveAll(layout); err != nil {
				return sample{}, err
			}
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(),
				Args: b.hbArgs("build", w, cfg.platforms, x(b.runID()), "--output", "oci:"+layout, "--tag", "bench")}, warm)
		}}
		tag := b.host + "/hb/" + w.Key + ":bench"
		var pushArgs []string
		hbPush = &step{name: "helperbuild push", run: func(warm bool) (sample, error) {
			pushArgs = b.hbArgs("push", w, cfg.platforms, x(b.runID()), "--tag", tag, "--insecure-registry", b.host)
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(), Args: pushArgs}, warm)
		}}
		hbNoop = &step{name: "helperbuild push, nothing changed", run: func(warm bool) (sample, error) {
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(), Args: pushArgs}, warm)
		}}
		steps = append(steps, hbBuild, hbPush, hbNoop)
	}

	var ko *step
	if b.koErr == nil {
		koDir := filepath.Join(b.work, "ko-"+w.Key)
		if err := os.MkdirAll(koDir, 0o755); err != nil {
			return err
		}
		// ko's per-build ldflags come from .ko.yaml; the template reads BENCH_RUN.
		koYAML := fmt.Sprintf("builds:\n- id: bench\n  main: %s\n  ldflags:\n  - -X %s=bench-{{.Env.BENCH_RUN}}\n", w.Pkg, w.XVar)
		if err := os.WriteFile(filepath.Join(koDir, ".ko.yaml"), []byte(koYAML), 0o644); err != nil {
			return err
		}
		ko = &step{name: "ko build", run: func(warm bool) (sample, error) {
			env := append(b.hbEnv(), "KO_DOCKER_REPO="+b.host+"/ko/"+w.Key, "KO_DEFAULTBASEIMAGE="+b.base,
				"KO_CONFIG_PATH="+koDir, "BENCH_RUN="+b.runID())
			return b.timed(ctx, proc{Dir: w.Dir, Env: env, Args: []string{b.ko, "build", "--bare",
				"--platform=" + strings.Join(cfg.platforms, ","), "--sbom=none", fmt.Sprintf("--jobs=%d", cfg.jobs), w.Pkg}}, warm)
		}}
		steps = append(steps, ko)
	}

	if err := b.rounds(ctx, w.Key, steps); err != nil {
		return err
	}

	if fi, err := os.Stat(filepath.Join(floorDir, binName(w, "linux/amd64"))); err == nil {
		w.Size = fi.Size()
	}
	title := w.Title
	if w.Size > 0 {
		title = fmt.Sprintf("%s (%s amd64 binary)", w.Title, fmtMB(w.Size))
	}
	n := len(cfg.platforms)
	full := floorFull.samples
	b.add(row{Workload: title, Step: fmt.Sprintf("floor: go build ×%d, -X changes (link reruns)", n), Samples: full})
	b.add(row{Workload: title, Step: fmt.Sprintf("floor: go build ×%d, nothing changed", n), Samples: floorNoop.samples})
	if hbBuild == nil {
		b.add(row{Workload: title, Step: "helperbuild build / push", Note: "not measured: " + b.hbErr.Error()})
	} else {
		b.add(row{Workload: title, Step: "helperbuild build → oci:DIR", Samples: hbBuild.samples, RSS: true, Phases: true,
			Compare: ratio(hbBuild.samples, full, "floor")})
		b.add(row{Workload: title, Step: "helperbuild push → registry", Samples: hbPush.samples, RSS: true, Bytes: true, Phases: true,
			Compare: ratio(hbPush.samples, full, "floor"), Target: "≤ 1.10× floor", OK: okRatio(hbPush.samples, full, 1.10)})
		d := pairedDiff(hbNoop.samples, floorNoop.samples)
		b.add(row{Workload: title, Step: "helperbuild push again, nothing changed", Samples: hbNoop.samples, RSS: true, Bytes: true, Phases: true,
			Compare: fmt.Sprintf("%+.2f s vs floor no-op", d.Seconds()), Target: "≤ +1 s, 0 B uploaded",
			OK: verdict(d.Seconds() <= 1 && maxUp(hbNoop.samples) == 0)})
	}
	if ko == nil {
		b.add(row{Workload: title, Step: "ko build --bare", Note: "not measured: " + b.koErr.Error()})
		return nil
	}
	b.add(row{Workload: title, Step: "ko build --bare → registry", Samples: ko.samples, RSS: true, Bytes: true,
		Compare: ratio(ko.samples, full, "floor")})
	if hbPush != nil {
		b.add(row{Workload: title, Step: "helperbuild push ÷ ko", Compare: ratio(hbPush.samples, ko.samples, "ko"),
			Target: "≤ 0.75× ko", OK: okRatio(hbPush.samples, ko.samples, 0.75)})
	}
	return nil
}

// memorySteps measures helperbuild's peak memory building bigmain (~48 MB)
// and bigmain/huge (~120 MB) for the same platforms, in interleaved rounds;
// every run links new binaries, so every run writes its layers.
func (b *bench) memorySteps(ctx context.Context) error {
	if b.hbErr != nil {
		b.add(row{Workload: "peak memory", Step: "helperbuild build", Note: "not measured: " + b.hbErr.Error()})
		return nil
	}
	var steps []*step
	var ws []*workload
	for _, name := range []string{"bigmain", "huge"} {
		w, err := b.workload(name)
		if err != nil {
			return err
		}
		layout := filepath.Join(b.work, "oci-mem-"+w.Key)
		ws = append(ws, w)
		steps = append(steps, &step{name: "helperbuild build " + w.Pkg, run: func(warm bool) (sample, error) {
			if err := os.RemoveAll(layout); err != nil {
				return sample{}, err
			}
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(),
				Args: b.hbArgs("build", w, b.cfg.memPlatforms, "-X "+w.XVar+"=bench-"+b.runID(), "--output", "oci:"+layout, "--tag", "bench")}, warm)
		}})
	}
	if err := b.rounds(ctx, "memory", steps); err != nil {
		return err
	}
	for i, s := range steps {
		size := layoutBinarySize(filepath.Join(b.work, "oci-mem-"+ws[i].Key))
		b.add(row{Workload: "peak memory", Step: fmt.Sprintf("helperbuild build %s, %s binaries ×%d platforms", ws[i].Pkg, fmtMB(size), len(b.cfg.memPlatforms)),
			Samples: s.samples, RSS: true, Target: "< 200 MiB", OK: verdict(maxRSS(s.samples) < 200<<20)})
	}
	a, c := steps[0].samples, steps[1].samples
	b.add(row{Workload: "peak memory", Step: "big ÷ small binary", Compare: fmt.Sprintf("%.2f× peak RSS (%s vs %s)",
		float64(medianRSS(c))/float64(medianRSS(a)), fmtMiB(medianRSS(c)), fmtMiB(medianRSS(a))),
		Target: "same within noise", OK: verdict(sameWithinNoise(a, c))})
	return nil
}
