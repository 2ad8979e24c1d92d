package build

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// compiles is a run's cross-build, started as soon as its targets are
// known: when the recipe or the flags name the platforms, beside the
// resolve's round trips (the push check, the bases), which on a real
// registry take longer than a go build that finds everything in its
// cache. Until attach hands it the assembler, nothing of it shows: a
// compile that ends waits (holding its job slot) with its "compiled"
// line, its checks and its layers; stop ends it unseen, so a resolve that
// fails reports only its own error, as if nothing had compiled.
type compiles struct {
	targets []crossbuild.Target
	of      []int // each target's index in plan.Platforms
	ctx     context.Context
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed when every started go build has ended
	err     error         // crossbuild.Build's, set before done closes
	gate    chan struct{} // closed by attach or stop

	mu      sync.Mutex
	a       *assembler // nil until attach
	started []bool     // [target] its go build has started
}

// startCompiles starts go build for every target of plan (see
// compileTargets), writing into binDir, and returns at once.
func startCompiles(ctx context.Context, plan *recipe.Plan, binDir string, opts Options) (*compiles, error) {
	targets, of := compileTargets(plan, binDir)
	goTmp := filepath.Join(opts.TempDir, "go-tmp")
	if err := os.MkdirAll(goTmp, 0o755); err != nil {
		return nil, err
	}
	c := &compiles{targets: targets, of: of, done: make(chan struct{}), gate: make(chan struct{}),
		started: make([]bool, len(targets))}
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	go func() {
		defer close(c.done)
		c.err = crossbuild.Build(c.ctx, targets, crossbuild.Options{
			Dir: plan.Dir,
			Go:  opts.Go,
			// go build's own temporary files go under the run's directory, which
			// is removed on every exit path, even when go is killed mid-build.
			Env:     append(goEnv(plan, opts), "GOTMPDIR="+goTmp),
			Flags:   plan.Flags,
			Ldflags: plan.Ldflags,
			Jobs:    opts.Jobs,
			Before:  c.before,
			After:   c.after(opts),
		})
	}()
	return c, nil
}

// before marks target i as compiling: at once when the assembler is
// there, else when attach comes.
func (c *compiles) before(_ context.Context, i int) {
	c.mu.Lock()
	c.started[i] = true
	a := c.a
	c.mu.Unlock()
	if a != nil {
		a.compiling(c.of[i])
	}
}

// after is crossbuild's After: once the gate is open, the compiled line,
// the binary's checks and its platform's assembly.
func (c *compiles) after(opts Options) func(ctx context.Context, i int, r crossbuild.Result) error {
	return func(ctx context.Context, i int, r crossbuild.Result) error {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.mu.Lock()
		a := c.a
		c.mu.Unlock()
		if a == nil {
			return context.Canceled // stopped
		}
		t := c.targets[i]
		opts.Logger.Info("compiled", "platform", platform.Format(t.Platform), "main", t.Main,
			"output", t.Output, "up_to_date", r.UpToDate, "duration", r.Duration.Round(time.Millisecond))
		if err := checkBinary(t); err != nil {
			return err
		}
		opts.hooks.onCompiled(ctx, t.Platform)
		a.compiled(c.of[i], r.UpToDate)
		return nil
	}
}

// attach hands the compiles the assembler: the platforms already
// compiling show as such, and compiles that ended go on to their checks.
func (c *compiles) attach(a *assembler) {
	c.mu.Lock()
	c.a = a
	var compiling []int
	for i, s := range c.started {
		if s {
			compiling = append(compiling, i)
		}
	}
	c.mu.Unlock()
	for _, i := range compiling {
		a.compiling(c.of[i])
	}
	close(c.gate)
}

// stop ends the compiles unseen (the resolve failed) and waits for every
// go build to end.
func (c *compiles) stop() {
	c.cancel(context.Canceled)
	close(c.gate)
	<-c.done
}

// wait returns crossbuild.Build's error once every go build has ended.
func (c *compiles) wait() error {
	<-c.done
	return c.err
}
