package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/rootfs"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// maxOutput bounds how much of a program's output is kept; a program that
// prints more than outputLimit is stopped.
const (
	maxOutput   = 64 << 10
	outputLimit = 1 << 20
)

// errTooMuchOutput stops a program that prints more than outputLimit bytes.
var errTooMuchOutput = errors.New("too much output")

// runCheck runs programs of one unpacked rootfs, each in a sandbox of its own.
type runCheck struct {
	platform v1.Platform
	rootfs   string
	t        *rootfs.FS
	env      []string
	qemu     string // "" for native runs
	timeout  time.Duration
	sandbox  *sandbox.Runner
	limits   sandbox.Limits
	f        findings
	ran      []string
	// The start-up runs (startup.go): the sandbox's binfmt_misc, the
	// commands that passed and the failures.
	binfmt  *sandbox.Binfmt
	startOK []string
	sf      findings
}

// newRunCheck finds how to run the platform's programs on this host: natively
// for amd64 on amd64, else under qemu-<arch>-static. ok is false (with a
// finding) when neither is possible. Programs get the image config's
// environment, with PATH added when it sets none.
func newRunCheck(p v1.Platform, dir string, t *rootfs.FS, cfg *v1.ConfigFile, opts Options) (*runCheck, bool) {
	r := &runCheck{platform: p, rootfs: dir, t: t, timeout: opts.RunTimeout, sandbox: opts.Sandbox, limits: opts.RunLimits,
		f: findings{name: CheckRun}, sf: findings{name: CheckStart}, binfmt: &sandbox.Binfmt{}}
	r.env = append([]string{}, cfg.Config.Env...)
	if _, ok := envPath(cfg.Config.Env); !ok {
		r.env = append(r.env, "PATH="+defaultPath)
	}
	if p.Architecture == "amd64" && opts.HostArch == "amd64" {
		return r, true
	}
	arch, known := platform.QemuArch(p)
	if !known {
		r.f.fail("no qemu-user emulator known for " + platform.Format(p))
		return r, false
	}
	q, err := opts.Qemu(arch)
	if err != nil {
		r.f.fail("qemu-" + arch + "-static not found: apt-get install qemu-user-static")
		return r, false
	}
	r.qemu = q
	if opts.Contract != ContractNone {
		b, err := opts.Binfmt(arch)
		if err != nil {
			r.f.fail(fmt.Sprintf("no binfmt_misc entry for qemu-%s to start the image's programs with: %v", arch, err))
			return r, false
		}
		r.binfmt = &b
	}
	return r, true
}

// runPrograms unpacks the tree into dir and runs each program with
// --version, then /bin/sh -c true when the image has a /bin/sh, each in a
// sandbox over the unpacked tree; dir is removed afterwards. listed are
// programs the summary names as not run. The error is for a sandbox that
// cannot be made (nothing runs unsandboxed) and for failures to read the
// image.
func runPrograms(ctx context.Context, layers []v1.Layer, t *rootfs.FS, cfg *v1.ConfigFile, p v1.Platform, programs, listed []string, dir string, opts Options) ([]Check, error) {
	r, ok := newRunCheck(p, dir, t, cfg, opts)
	if !ok {
		return r.f.done(""), nil
	}
	defer os.RemoveAll(dir)
	uid, gid := sandbox.Owner()
	err := unpack(ctx, layers, t, dir, unpackLimits{maxBytes: opts.UnpackMaxBytes, maxFiles: opts.UnpackMaxFiles, uid: uid, gid: gid})
	var big *tooBigError
	if errors.As(err, &big) {
		r.f.fail(big.Error() + ": nothing was run")
		return r.f.done(""), nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := opts.Sandbox.TotalLimits(); err != nil {
		r.f.warn(err.Error())
	}
	if opts.Contract != ContractNone {
		if err := asNode(dir, t, p); err != nil {
			return nil, fmt.Errorf("unpack as a node presents it: %w", err)
		}
	}
	for _, prog := range programs {
		if err := r.program(ctx, prog, []string{"--version"}, true); err != nil {
			return nil, err
		}
	}
	noSh := ""
	if _, _, err := t.Resolve("/bin/sh", true); err == nil {
		if err := r.program(ctx, "/bin/sh", []string{"-c", "true"}, false); err != nil {
			return nil, err
		}
	} else {
		noSh = "; no /bin/sh"
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	how := "under " + filepath.Base(r.qemu)
	if r.qemu == "" {
		how = "natively"
	}
	summary := "nothing to run" + noSh
	if len(r.ran) > 0 {
		summary = "ran " + how + " in a sandbox: " + strings.Join(r.ran, "; ") + noSh
	}
	if len(listed) > 0 {
		summary += "; not run (only GitLab Runner's binaries and the release's are asked --version): " + strings.Join(listed, ", ")
	}
	checks := r.f.done(summary)
	if opts.Contract != ContractNone {
		sc, err := r.startUp(ctx, opts.Contract, dir+"-start")
		if err != nil {
			return nil, err
		}
		checks = append(checks, sc...)
	}
	return checks, nil
}

// program runs the program at image path p with args in a sandbox and
// records the result; with version set it compares an "OS/Arch:" line with
// the platform. The error is a sandbox that cannot be made.
func (r *runCheck) program(ctx context.Context, p string, args []string, version bool) error {
	label := strings.Join(append([]string{p}, args...), " ")
	if _, _, err := r.t.Resolve(p, true); err != nil {
		r.f.failAt(p, fmt.Sprintf("%s: %v", p, err))
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var out *limitedBuffer
	var err error
	for attempt := 1; ; attempt++ {
		out = &limitedBuffer{max: maxOutput, limit: outputLimit, over: func() { stop(errTooMuchOutput) }}
		err = r.sandbox.Run(ctx, sandbox.Spec{Root: r.rootfs, Path: p, Args: args, Env: r.env, Emulator: r.qemu,
			Limits: r.limits, Stdout: out, Stderr: out})
		// A native run execs a file unpacked moments ago; should a child
		// another goroutine is forking still hold an inherited write
		// descriptor to it (golang/go#22315), Linux refuses to run it for
		// those milliseconds: try again.
		if !errors.Is(err, syscall.ETXTBSY) || attempt == txtBusyAttempts || !sleepCtx(ctx, time.Duration(attempt)*10*time.Millisecond) {
			break
		}
	}
	first := progress.FirstLine(string(out.Bytes()))
	var exit *exec.ExitError
	var execErr *sandbox.ExecError
	var memErr *sandbox.MemoryLimitError
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		return err
	case errors.As(err, &memErr):
		r.f.failAt(p, fmt.Sprintf("%s: %v", label, err))
	case errors.Is(context.Cause(ctx), errTooMuchOutput):
		r.f.failAt(p, fmt.Sprintf("%s printed more than %s and was stopped", label, formatBytes(outputLimit)))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.f.failAt(p, fmt.Sprintf("%s timed out after %s", label, r.timeout))
	case errors.As(err, &execErr):
		r.f.failAt(p, fmt.Sprintf("%s: %v", label, err))
	case errors.As(err, &exit):
		r.f.failAt(p, fmt.Sprintf("%s %s: %s", label, exitReason(exit), first))
	case err != nil:
		r.f.failAt(p, fmt.Sprintf("%s: %v", label, err))
	default:
		r.checkOutput(p, label, out.Bytes(), version)
	}
	return nil
}

// exitReason says how a program that did not exit 0 ended.
func exitReason(exit *exec.ExitError) string {
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return fmt.Sprintf("exited with status %d", exit.ExitCode())
	}
	if why := limitSignal(ws.Signal()); why != "" {
		return why
	}
	return "was killed by " + ws.Signal().String()
}

// checkOutput records a successful run, showing the OS/Arch line of a
// --version output when there is one and the first line otherwise.
func (r *runCheck) checkOutput(p, label string, out []byte, version bool) {
	line := progress.FirstLine(string(out))
	if version {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "OS/Arch:")
			if !ok {
				continue
			}
			want := r.platform.OS + "/" + r.platform.Architecture
			if got := strings.TrimSpace(v); got != want {
				r.f.failAt(p, fmt.Sprintf("%s says OS/Arch %s, want %s", label, got, want))
				return
			}
			line = "OS/Arch: " + want
		}
	}
	if line == "" {
		r.ran = append(r.ran, label)
		return
	}
	r.ran = append(r.ran, label+" ("+line+")")
}

// limitedBuffer keeps the first max bytes written and discards the rest;
// once more than limit bytes were written it calls over, once. It must not
// have a ReadFrom method (as an embedded bytes.Buffer would give it):
// io.Copy would use that and bypass both bounds.
type limitedBuffer struct {
	buf        bytes.Buffer
	max, limit int
	total      int
	over       func()
}

// Bytes is what was kept.
func (b *limitedBuffer) Bytes() []byte { return b.buf.Bytes() }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	before := b.total
	b.total += len(p)
	if before <= b.limit && b.total > b.limit && b.over != nil {
		b.over()
	}
	return len(p), nil
}

// txtBusyAttempts bounds the runs of a program whose file is briefly busy.
const txtBusyAttempts = 5

// sleepCtx waits for d unless ctx ends first; it reports whether it waited.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
