package build

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// Build runs the whole build for plan and returns the verified images.
func Build(ctx context.Context, plan *recipe.Plan, opts Options) (*product.Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	b := newBases(opts.Images)
	// The go command's version, for attestations whose binaries do not name theirs.
	var goVer func() (string, error)
	if opts.Attest.on() {
		var stop func()
		goVer, stop = goVersion(ctx, opts.Go, goEnv(plan, opts))
		defer stop()
	}
	opts.phase(progress.KindPhaseStart, "resolve", "resolve: base images and registry access")
	binDir, cache, err := workDirs(plan, opts)
	if err != nil {
		return nil, err
	}
	// With its platforms named, the compiles need nothing the resolve finds:
	// they start beside it, unseen until it has passed.
	var c *compiles
	if platformsNamed(plan) {
		if c, err = startCompiles(ctx, plan, binDir, opts); err != nil {
			return nil, err
		}
	}
	plan, units, err := preflightAndPlan(ctx, plan, b, &opts)
	if err != nil {
		if c != nil {
			c.stop()
		}
		return nil, err
	}
	resolved(plan, units, b, opts)
	if c == nil {
		if c, err = startCompiles(ctx, plan, binDir, opts); err != nil {
			return nil, err
		}
	}
	defer c.cancel(nil)
	at := newAttestor(opts, plan, goEnv(plan, opts), goVer)
	a := newAssembler(plan, units, b, binDir, cache, opts, c.of, at)
	if err := compileAndAssemble(ctx, plan, c, a, opts); err != nil {
		return nil, err
	}
	res, err := indexAndVerify(ctx, plan, units, a, b, opts)
	if err != nil {
		return nil, err
	}
	opts.phase(progress.KindPhaseEnd, "build", a.outcome(len(c.targets), len(res.Images)))
	if opts.CacheDir != "" {
		// Layers no run used for a week go, so a CI cache stays bounded.
		if freed, err := cache.Prune(cacheMaxAge); err != nil {
			opts.Logger.Warn("cache prune", "error", err)
		} else if freed > 0 {
			opts.Logger.Info("cache pruned", "bytes", freed)
		}
		if freed, err := opts.Images.Blobs.Prune(cacheMaxAge); err != nil {
			opts.Logger.Warn("cache prune", "error", err)
		} else if freed > 0 {
			opts.Logger.Info("base cache pruned", "bytes", freed)
		}
	}
	return res, nil
}

// resolved ends the resolve phase (what was pinned, for which
// platforms), shows every unit waiting and starts the build phase.
func resolved(plan *recipe.Plan, units [][]unit, b *bases, opts Options) {
	bases := "no base image (scratch)"
	if n := b.count(); n > 0 {
		bases = fmt.Sprintf("%d base %s pinned", n, progress.Plural(n, "image", "images"))
	}
	end := progress.Event{Kind: progress.KindPhaseEnd, Phase: "resolve", Message: fmt.Sprintf("%s, %d %s",
		bases, len(plan.Platforms), progress.Plural(len(plan.Platforms), "platform", "platforms"))}
	for _, p := range plan.Platforms {
		end.Platforms = append(end.Platforms, platform.Format(p.Platform))
	}
	opts.Progress.Event(end)
	for i := range units {
		for _, u := range units[i] {
			opts.stage(plan.Images[i].Name, u.platform, progress.Waiting, progress.Event{})
		}
	}
	opts.phase(progress.KindPhaseStart, "build", "build: compile, write layers, check")
}

// compileTargets is every binary of plan for each of its platforms, and
// for each target the index of its platform in plan.Platforms. A plan
// without images has nothing to put binaries in: nothing compiles.
func compileTargets(plan *recipe.Plan, binDir string) ([]crossbuild.Target, []int) {
	if len(plan.Images) == 0 {
		return nil, nil
	}
	var targets []crossbuild.Target
	var of []int
	for k, bin := range plan.Binaries {
		for i, p := range plan.Platforms {
			if p.Outputs[k] == "" {
				continue // a Windows platform compiles only what its entries hold
			}
			targets = append(targets, crossbuild.Target{Platform: p.Platform, Main: bin.Main, Output: filepath.Join(binDir, p.Outputs[k])})
			of = append(of, i)
		}
	}
	return targets, of
}

// compileAndAssemble assembles every unit while c compiles: a platform's
// images are assembled (layers compressed) as soon as its last binary is
// compiled, while other platforms still compile.
func compileAndAssemble(ctx context.Context, plan *recipe.Plan, c *compiles, a *assembler, opts Options) error {
	// Assembly runs beside the compiles, not in their job slots, so a link
	// never waits for another platform's gzip; but only in slots no compile
	// needs and on one goroutine, so it takes the time the links leave (five
	// platforms in two slots: the first four are compressed while the fifth
	// links alone). A failed assembly cancels the compiles, unless it failed
	// its checks: those are gathered (see checkFindings).
	var asm errgroup.Group
	a.schedule = func(i, j int) {
		asm.Go(func() error {
			if err := a.assemble(c.ctx, i, j, true); err != nil && !a.found.gather(c.ctx, i, j, err) {
				c.cancel(err)
				return err
			}
			return nil
		})
	}
	// Every platform's base is read beside the compiles too, so the last
	// platform's assembly does not start with it; a failed build stops it
	// between bases rather than waiting for them all.
	stopPrefetch := make(chan struct{})
	asm.Go(func() error {
		a.flat.prefetch(c.ctx, a.units, stopPrefetch)
		return nil
	})
	start := time.Now()
	c.attach(a)
	err := c.wait()
	if err != nil {
		close(stopPrefetch)
	}
	a.slots.compilesEnded()
	if asmErr := asm.Wait(); asmErr != nil {
		return a.found.withFindings(plan, asmErr) // the root cause when it cancelled the compiles
	}
	if err != nil {
		return a.found.withFindings(plan, err)
	}
	// Images that copy no binary (or a plan without binaries) are assembled now.
	if err := a.rest(ctx); err != nil {
		return a.found.withFindings(plan, err)
	}
	if err := a.found.err(plan); err != nil {
		return err
	}
	opts.Logger.Info("built", "binaries", len(c.targets), "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// goEnv is the environment go build runs in.
func goEnv(plan *recipe.Plan, opts Options) []string {
	return append(append([]string{}, opts.Env...), plan.Env...)
}

// checkBinary checks that t's binary is for its platform, before it goes
// into a layer.
func checkBinary(t crossbuild.Target) error {
	if platform.IsWindows(t.Platform) {
		return checkWindowsBinary(t)
	}
	if err := elfcheck.CheckFile(t.Output, t.Platform); err != nil {
		if errors.Is(err, elfcheck.ErrNotELF) {
			return &InputError{fmt.Errorf("%s is not a main package: go build wrote no executable for it (%w)", t.Main, err)}
		}
		return fmt.Errorf("binary %s for %s: %w", t.Main, platform.Format(t.Platform), err)
	}
	return nil
}

// indexAndVerify builds every image's index from its assembled platforms
// and checks each index as a whole.
func indexAndVerify(ctx context.Context, plan *recipe.Plan, units [][]unit, a *assembler, b *bases, opts Options) (*product.Result, error) {
	res := &product.Result{Images: make([]product.Image, len(plan.Images))}
	for i, im := range plan.Images {
		built, err := indexImage(im, units[i], a.images[i], a.attests[i], b, opts)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", im.Name, err)
		}
		res.Images[i] = *built
	}
	for i, img := range res.Images {
		if err := verifyIndex(ctx, img, a.checked(i), opts); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// preflightAndPlan runs opts.Preflight (push's permission check) and
// opts.Attest.Complete (git's answers for the attestations, which it
// writes into opts.Attest) beside planUnits: round trips to registries
// and git commands, beside which the compiles may run already (see
// compiles), unseen. Nothing compiled shows and nothing is assembled
// unless all pass; the preflight's failure is reported first, and either
// failure stops the planning at once.
func preflightAndPlan(ctx context.Context, plan *recipe.Plan, b *bases, opts *Options) (*recipe.Plan, [][]unit, error) {
	var preflightErr, completeErr error
	var pre sync.WaitGroup
	// Stopped on the preflight's failure only: the planned bases read
	// their layers through pctx later, so it lives as long as ctx.
	pctx, stop := context.WithCancel(ctx)
	context.AfterFunc(ctx, stop)
	if opts.Preflight != nil {
		pre.Go(func() {
			if preflightErr = opts.Preflight(ctx); preflightErr != nil {
				stop()
			}
		})
	}
	att := opts.Attest
	if att.on() && att.Complete != nil {
		pre.Go(func() {
			if completeErr = att.Complete(ctx, &att); completeErr != nil {
				stop()
			}
		})
	}
	plan, units, err := planUnits(pctx, plan, b, *opts)
	pre.Wait()
	switch {
	case preflightErr != nil:
		return nil, nil, preflightErr
	case completeErr != nil:
		return nil, nil, completeErr
	}
	opts.Attest = att
	return plan, units, err
}

// cacheMaxAge is how long an unused cached layer is kept.
const cacheMaxAge = 7 * 24 * time.Hour
