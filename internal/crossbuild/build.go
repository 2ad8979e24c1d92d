package crossbuild

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/execerr"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// Target is one binary to build.
type Target struct {
	Platform v1.Platform
	Main     string // package path as given to go build, e.g. "./apps/gitlab-runner-helper" or "."
	Output   string // absolute path of the binary to write; its directory is created
}

// Options configure Build. Env and Jobs have no usable default.
type Options struct {
	Dir     string   // working directory (module root) for go build; "" is the current directory
	Go      string   // go command; default "go"
	Env     []string // base environment (the caller passes os.Environ()); required
	Flags   []string // extra build flags, e.g. ["-tags", "netgo"]; -trimpath is always added once
	Ldflags string   // already-rendered -ldflags value; "" passes no -ldflags
	Jobs    int      // builds at a time; must be at least 1

	// Before, if set, runs in the worker that compiles target i, just
	// before it starts (the release shows the platform as compiling).
	Before func(ctx context.Context, i int)

	// After, if set, runs in the same worker right after target i compiled,
	// so the caller can process a binary while other platforms still
	// compile. Its error fails the build like a compile error.
	After func(ctx context.Context, i int, r Result) error
}

// Result is what go build did for one target.
type Result struct {
	// UpToDate: Output already held the binary go build would make (its
	// build ID matched: everything came from go's build cache), so go
	// compiled nothing and linked nothing (it only touched the file).
	UpToDate bool
	// Duration is how long go build ran.
	Duration time.Duration
}

// job is one target, ready to run.
type job struct {
	target Target
	name   string // "./apps/x for linux/arm64"
	env    []string
	args   []string
}

// Build runs `go build -o Output -trimpath Flags... -ldflags Ldflags Main`
// for every target, at most opts.Jobs at a time. It returns after every
// started build has ended: nil if all succeeded, else the first failure
// (an *execerr.Error: `build ./apps/x for linux/arm64: exit status 1`, the
// compiler's first lines, and the way out when go's output shows it). If ctx is cancelled it returns ctx's error.
func Build(ctx context.Context, targets []Target, opts Options) error {
	jobs, err := plan(targets, opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cross-build: %w", err)
	}
	goCmd := opts.Go
	if goCmd == "" {
		goCmd = "go"
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Jobs)
	for i, j := range jobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // an earlier target failed or the caller cancelled
			}
			if opts.Before != nil {
				opts.Before(gctx, i)
			}
			r, err := compile(gctx, goCmd, opts.Dir, j)
			if err != nil {
				return err
			}
			if opts.After != nil {
				if err := opts.After(gctx, i, r); err != nil {
					return err // the callback names what it was doing
				}
			}
			return nil
		})
	}
	err = g.Wait()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("cross-build: %w", ctxErr)
	}
	return err
}

// plan validates opts and targets and prepares every job, so that nothing
// runs when any of them is wrong.
func plan(targets []Target, opts Options) ([]job, error) {
	if opts.Jobs <= 0 {
		return nil, fmt.Errorf("cross-build jobs %d: want at least 1", opts.Jobs)
	}
	if len(opts.Env) == 0 {
		return nil, errors.New("cross-build environment is empty; pass the environment for go build (os.Environ())")
	}
	flags, err := buildFlags(opts.Flags)
	if err != nil {
		return nil, err
	}
	jobs := make([]job, len(targets))
	written := make(map[string]int, len(targets))
	for i, t := range targets {
		name := fmt.Sprintf("%s for %s", t.Main, platform.Format(t.Platform))
		if t.Main == "" {
			return nil, fmt.Errorf("target %d (%s): no main package", i, name)
		}
		if !filepath.IsAbs(t.Output) {
			return nil, fmt.Errorf("build %s: output %q is not an absolute path", name, t.Output)
		}
		out := filepath.Clean(t.Output)
		if prev, ok := written[out]; ok {
			return nil, fmt.Errorf("build %s and %s both write %s; add {{.Variant}} (or another distinguishing field) to the output template",
				jobs[prev].name, name, out)
		}
		written[out] = i
		env, err := Env(opts.Env, t.Platform)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", t.Main, err)
		}
		args := append([]string{"build", "-o", out}, flags...)
		if opts.Ldflags != "" {
			args = append(args, "-ldflags", opts.Ldflags)
		}
		jobs[i] = job{target: t, name: name, env: env, args: append(args, t.Main)}
	}
	return jobs, nil
}

// compile runs one go build. On failure the error is an *execerr.Error
// with the command's output, unless ctx ended the build.
//
// go build leaves an output whose build ID is the one it would build
// (cmd/go's useCache: up to date, only touched) and otherwise links a new
// one, whose build ID differs (it starts with the link's action ID, a hash
// of every input). So an output with the same Go build ID before and after
// is a build served entirely from go's cache; its modification time says
// nothing (go touches an up-to-date output).
func compile(ctx context.Context, goCmd, dir string, j job) (Result, error) {
	if err := os.MkdirAll(filepath.Dir(j.target.Output), 0o755); err != nil {
		return Result{}, fmt.Errorf("build %s: %w", j.name, err)
	}
	before := goBuildID(j.target.Output)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, j.args...)
	cmd.Dir = dir
	cmd.Env = j.env
	killGroupOnCancel(cmd)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return Result{UpToDate: before != "" && goBuildID(j.target.Output) == before, Duration: time.Since(start)}, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Result{}, fmt.Errorf("build %s: %w", j.name, ctxErr)
	}
	return Result{}, execerr.New("build "+j.name, err, out)
}

// goBuildID is the Go build ID note of the ELF executable at path, "" when
// there is none (no file, not ELF, no note): such an output never counts
// as up to date. Only the headers and the note are read.
func goBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil || s.Size > 4096 {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	return string(data)
}
