package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const epoch = "1700000000" // SOURCE_DATE_EPOCH for helperbuild and ko

// step is one thing to time; run is called once per round.
type step struct {
	name     string
	run      func(warm bool) (sample, error)
	skipWarm bool // not run in warm-up rounds
	samples  []sample
	// partner, when set, is the same step of the other helperbuild (-ab):
	// the two swap places in every other round.
	partner *step
}

// order is steps as run in round r: every other round, each step and its
// partner (listed next to each other) swap places, so neither always runs
// first.
func order(steps []*step, r int) []*step {
	out := slices.Clone(steps)
	if r%2 == 0 {
		return out
	}
	for i := 0; i+1 < len(out); i++ {
		if out[i].partner == out[i+1] {
			out[i], out[i+1] = out[i+1], out[i]
			i++
		}
	}
	return out
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
		for _, s := range order(steps, r) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if warm && s.skipWarm {
				continue
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
		parts = append(parts, fmt.Sprintf("uploaded %s in %d blobs, %d requests", fmtBytes(s.Up.BlobBytes), s.Up.BlobUploads, s.Up.Requests))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// timed runs p, with the proxy's counters read around it.
func (b *bench) timed(ctx context.Context, p proc, warm bool) (sample, error) {
	p.Log, p.RSS, p.Registry, p.ProcEvery = b.log, true, b.reg.PID(), b.cfg.procEvery
	p.Timeout = b.cfg.timeout
	if warm {
		p.Timeout = b.cfg.warmTimeout
	}
	before, regBefore := b.proxy.snapshot(), b.reg.CPU()
	s, err := run(ctx, p)
	s.Up = b.proxy.snapshot().sub(before)
	s.RegistryCPU = max(b.reg.CPU()-regBefore, 0)
	return s, err
}

// hbArgs is a helperbuild build or push command line for w.
func (b *bench) hbArgs(verb string, w *workload, platforms []string, ldflags string, dest ...string) []string {
	return b.hbArgsOf(b.helperbuild, verb, w, platforms, ldflags, dest...)
}

// hbArgsOf is hbArgs for the helperbuild binary bin. The other
// helperbuild (-ab) has a cache of its own: its binaries and layers would
// otherwise replace this one's between a push and its no-op re-run.
func (b *bench) hbArgsOf(bin, verb string, w *workload, platforms []string, ldflags string, dest ...string) []string {
	cache := "helperbuild-cache"
	if bin != b.helperbuild {
		cache = "helperbuild-cache-b"
	}
	args := []string{bin, verb, w.Pkg,
		"--base", b.baseOf(w), "--platforms", strings.Join(platforms, ","),
		"--jobs", fmt.Sprint(b.cfg.jobs), "--ldflags", ldflags,
		"--version", "v0.0.0-bench", "--revision", "0000000000000000000000000000000000000000",
		"--branch", "main", "--source", "https://example.com/bench",
		"--binary-name", w.Bin,
		// JSON progress with the details (-v): every event is stamped,
		// and the report's breakdown is computed from them.
		"--progress", "json", "-v",
		// helperbuild keeps binaries and layers between runs; a cache of
		// the benchmark's own starts cold (the warm-up fills it) and is
		// removed with the work directory.
		"--cache-dir", filepath.Join(b.work, cache)}
	return append(args, dest...)
}

func (b *bench) hbEnv() []string {
	return append(os.Environ(), "SOURCE_DATE_EPOCH="+epoch)
}

// modeSteps are one workload's steps in one mode: with loops busy loops
// beside every timed command, or none (idle). A step is nil when its tool
// is missing.
type modeSteps struct {
	loops                       int
	floorFull, floorNoop        *step
	hbBuild, hbPush, hbNoop, ko *step
	// hbPlain is helperbuild push --attest none: what the attestations
	// (on by default, in the index) cost is hbPush minus it.
	hbPlain *step
	// hbPushB, hbNoopB and hbPlainB are hbPush, hbNoop and hbPlain run by
	// the other helperbuild (-ab), each next to its partner.
	hbPushB, hbNoopB, hbPlainB *step
	// pairs are the no-op pairs timed after the rounds (-noop-pairs).
	pairs []noopPair
}

func (m *modeSteps) list() []*step {
	var out []*step
	for _, s := range []*step{m.floorFull, m.floorNoop, m.hbBuild, m.hbPush, m.hbPushB, m.hbNoop, m.hbNoopB, m.hbPlain, m.hbPlainB, m.ko} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// samples of s; nil when s was not measured.
func samples(s *step) []sample {
	if s == nil {
		return nil
	}
	return s.samples
}

// releaseSteps measures, in interleaved rounds, the floor (full and no-op),
// helperbuild build, push and no-op push, and ko for one workload, idle
// and (with -busy) again in the same round with busy loops beside every
// timed command, and adds the rows.
func (b *bench) releaseSteps(ctx context.Context, w *workload) error {
	floorDir := filepath.Join(b.work, "floor-"+w.Key)
	koDir := filepath.Join(b.work, "ko-"+w.Key)
	if b.koErr == nil {
		if err := os.MkdirAll(koDir, 0o755); err != nil {
			return err
		}
		// ko's per-build ldflags come from .ko.yaml; the template reads BENCH_RUN.
		koYAML := fmt.Sprintf("builds:\n- id: bench\n  main: %s\n  ldflags:\n  - -X %s=bench-{{.Env.BENCH_RUN}}\n", w.Pkg, w.XVar)
		if err := os.WriteFile(filepath.Join(koDir, ".ko.yaml"), []byte(koYAML), 0o644); err != nil {
			return err
		}
	}
	idle := b.modeSteps(ctx, w, floorDir, koDir, 0)
	steps := idle.list()
	var busy *modeSteps
	if b.cfg.busy > 0 {
		busy = b.modeSteps(ctx, w, floorDir, koDir, b.cfg.busy)
		steps = append(steps, busy.list()...)
	}
	if err := b.rounds(ctx, w.Key, steps); err != nil {
		return err
	}
	for _, m := range []*modeSteps{idle, busy} {
		if m != nil {
			if err := b.noopPairs(ctx, w.Key, m, b.cfg.noopPairs); err != nil {
				return err
			}
		}
	}
	if fi, err := os.Stat(filepath.Join(floorDir, binName(w, "linux/amd64"))); err == nil {
		w.Size = fi.Size()
	}
	b.releaseRows(w, idle, busy)
	return nil
}

// modeSteps defines one workload's steps in one mode (see modeSteps).
func (b *bench) modeSteps(ctx context.Context, w *workload, floorDir, koDir string, loops int) *modeSteps {
	cfg := b.cfg
	m := &modeSteps{loops: loops}
	x := func(id string) string { return "-X " + w.XVar + "=bench-" + id }
	named := func(name string) string {
		if loops > 0 {
			return fmt.Sprintf("%s, %d busy loops", name, loops)
		}
		return name
	}
	// Busy rounds skip the warm-up: the idle ones fill the same caches.
	def := func(name string, run func(warm bool) (sample, error)) *step {
		return &step{name: named(name), skipWarm: loops > 0, run: func(warm bool) (sample, error) {
			return beside(loops, b.cfg.busySession, func() (sample, error) { return run(warm) })
		}}
	}

	// The floor: helperbuild's go builds, timed like it (floorBuild); a
	// new -X each round relinks, the same -X again is go's no-op.
	var floorX string
	m.floorFull = def("floor go build, link reruns", func(warm bool) (sample, error) {
		floorX = x(b.runID())
		return b.floorBuild(ctx, w, floorDir, floorX, warm)
	})
	m.floorNoop = def("floor go build, nothing changed", func(warm bool) (sample, error) {
		return b.floorBuild(ctx, w, floorDir, floorX, warm)
	})

	if b.hbErr == nil {
		layout := filepath.Join(b.work, "oci-"+w.Key)
		m.hbBuild = def("helperbuild build", func(warm bool) (sample, error) {
			if err := os.RemoveAll(layout); err != nil {
				return sample{}, err
			}
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(),
				Args: b.hbArgs("build", w, cfg.platforms, x(b.runID()), "--output", "oci:"+layout, "--tag", "bench")}, warm)
		})
		tag := b.host + "/hb/" + w.Key + ":bench"
		var pushArgs []string
		m.hbPush = def("helperbuild push", func(warm bool) (sample, error) {
			pushArgs = b.hbArgs("push", w, cfg.platforms, x(b.runID()), "--tag", tag, "--insecure-registry", b.host)
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(), Args: pushArgs}, warm)
		})
		m.hbNoop = def("helperbuild push, nothing changed", func(warm bool) (sample, error) {
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(), Args: pushArgs}, warm)
		})
		// Another repository, so it uploads its layers like hbPush does.
		plainTag := b.host + "/hb/" + w.Key + "-plain:bench"
		m.hbPlain = def("helperbuild push --attest none", func(warm bool) (sample, error) {
			return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(),
				Args: b.hbArgs("push", w, cfg.platforms, x(b.runID()), "--tag", plainTag, "--insecure-registry", b.host, "--attest", "none")}, warm)
		})
		if cfg.ab != "" {
			// The other helperbuild pushes to repositories of its own, so
			// it uploads its layers as the first one does.
			tagB, plainB := b.host+"/hb-b/"+w.Key+":bench", b.host+"/hb-b/"+w.Key+"-plain:bench"
			var pushArgsB []string
			m.hbPushB = def("helperbuild (B) push", func(warm bool) (sample, error) {
				pushArgsB = b.hbArgsOf(cfg.ab, "push", w, cfg.platforms, x(b.runID()), "--tag", tagB, "--insecure-registry", b.host)
				return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(), Args: pushArgsB}, warm)
			})
			m.hbNoopB = def("helperbuild (B) push, nothing changed", func(warm bool) (sample, error) {
				return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(), Args: pushArgsB}, warm)
			})
			m.hbPlainB = def("helperbuild (B) push --attest none", func(warm bool) (sample, error) {
				return b.timed(ctx, proc{Dir: w.Dir, Env: b.hbEnv(),
					Args: b.hbArgsOf(cfg.ab, "push", w, cfg.platforms, x(b.runID()), "--tag", plainB, "--insecure-registry", b.host, "--attest", "none")}, warm)
			})
			m.hbPush.partner, m.hbPushB.partner = m.hbPushB, m.hbPush
			m.hbPlain.partner, m.hbPlainB.partner = m.hbPlainB, m.hbPlain
			// Each no-op follows its own push in either order: A, B, A's
			// no-op, B's no-op, or B, A, B's, A's.
			m.hbNoop.partner, m.hbNoopB.partner = m.hbNoopB, m.hbNoop
		}
	}

	if b.koErr == nil {
		m.ko = def("ko build", func(warm bool) (sample, error) {
			env := append(b.hbEnv(), "KO_DOCKER_REPO="+b.host+"/ko/"+w.Key, "KO_DEFAULTBASEIMAGE="+b.baseOf(w),
				"KO_CONFIG_PATH="+koDir, "BENCH_RUN="+b.runID())
			return b.timed(ctx, proc{Dir: w.Dir, Env: env, Args: []string{b.ko, "build", "--bare",
				"--platform=" + strings.Join(cfg.platforms, ","), "--sbom=" + cfg.koSBOM, fmt.Sprintf("--jobs=%d", cfg.jobs), w.Pkg}}, warm)
		})
	}
	return m
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
