//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs s.Path in a new sandbox and waits for it and everything it
// started to end. It returns nil when the program exited 0, an
// *exec.ExitError when it exited otherwise or was killed (the context ending
// kills it), an *ExecError when it could not be executed and an
// *UnavailableError when the sandbox could not be made.
func (r *Runner) Run(ctx context.Context, s Spec) error {
	if !path.IsAbs(s.Path) {
		return fmt.Errorf("sandbox: program path %q is not absolute", s.Path)
	}
	cfg := initConfig{Path: s.Path, Args: s.Args, Env: s.Env, Dir: s.Dir, Limits: s.Limits.withDefaults(), User: s.User, Mounts: s.Mounts}
	if cfg.Env == nil {
		cfg.Env = []string{}
	}
	if err := checkExtras(s); err != nil {
		return err
	}
	if s.Binfmt != nil {
		line, err := s.Binfmt.line()
		if err != nil {
			return err
		}
		cfg.PrivateBinfmt, cfg.Binfmt = true, line
	}
	return r.start(ctx, s.Root, s.Emulator, cfg, s.Stdin, s.Stdout, s.Stderr)
}

// Probe makes a sandbox around an empty directory in tmpDir and ends it
// without running anything: an *UnavailableError says --run cannot work here.
func (r *Runner) Probe(ctx context.Context, tmpDir string) error {
	dir, err := os.MkdirTemp(tmpDir, "sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	uid, gid := Owner()
	if err := os.Lchown(dir, uid, gid); err != nil {
		return err
	}
	return r.start(ctx, dir, "", initConfig{Probe: true, Limits: Limits{}.withDefaults()}, nil, nil, nil)
}

// start runs the init: the binary itself, re-executed in new namespaces
// with root as its working directory, reading cfg from fd 3 and reporting
// on fd 4.
func (r *Runner) start(ctx context.Context, root, emulator string, cfg initConfig, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	// privileged reads two /proc files: decide it once per run.
	priv := privileged()
	cfg.Emulator, cfg.DropGroups = emulator, priv
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer cfgR.Close()
	defer cfgW.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer repR.Close()
	defer repW.Close()

	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{initArg0}
	cmd.Env = []string{}
	// The init starts in root, as the caller's kernel uid: a directory the
	// caller may reach but the sandbox's own uid may not (a private
	// TMPDIR) is reached that way, and in the init's mount namespace.
	cmd.Dir = root
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = []*os.File{cfgR, repW}
	cmd.SysProcAttr = sysProcAttr(priv)
	cmd.WaitDelay = time.Second
	cg, err := runCgroupFor(cfg)
	if err != nil {
		return err
	}
	defer cg.remove()
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("sandbox root %s: %w", root, err)
		}
		return &UnavailableError{Step: "create namespaces", Err: err}
	}
	// The init waits for its configuration, so it runs nothing before this.
	if err := cg.add(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return &UnavailableError{Step: "put the run into its cgroup", Err: err}
	}
	// Only the init holds these ends now, so EOF means it ended or exec'd.
	cfgR.Close()
	repW.Close()
	if r.Started != nil {
		r.Started(cmd.Process.Pid)
	}
	go func() {
		_ = json.NewEncoder(cfgW).Encode(cfg)
		cfgW.Close()
	}()
	reps, rerr := readReports(repR)
	werr := cmd.Wait()
	return cg.outcome(outcome(ctx, cfg, reps, rerr, werr))
}

// outcome turns what the init reported and how it ended into Run's error.
func outcome(ctx context.Context, cfg initConfig, reps []report, rerr, werr error) error {
	ready := false
	for _, rep := range reps {
		switch rep.Stage {
		case stageReady:
			ready = true
		case stageExec:
			return &ExecError{Path: cfg.Path, Err: rep.err()}
		case stageProbe:
			if cfg.Probe && werr == nil {
				return nil
			}
		default:
			return &UnavailableError{Step: rep.Stage, Err: rep.err()}
		}
	}
	switch {
	case ready:
		return werr
	case ctx.Err() != nil:
		return werr
	case rerr != nil:
		return &UnavailableError{Step: "read the init's report", Err: rerr}
	default:
		return &UnavailableError{Step: "start the init", Err: fmt.Errorf("it ended (%v) without a report; the binary must call sandbox.Init first in main", werr)}
	}
}

// readReports reads the init's JSON reports until it closes the pipe.
func readReports(r io.Reader) ([]report, error) {
	dec := json.NewDecoder(io.LimitReader(r, 64<<10))
	var out []report
	for {
		var rep report
		if err := dec.Decode(&rep); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, rep)
	}
}

// sysProcAttr puts the init into new namespaces. It keeps the caller's
// kernel uid until it has opened what it needs from the host (the root
// directory and the emulator) and then becomes the namespace's root, so it
// gets the capabilities it needs there as ambient ones. priv is privileged().
func sysProcAttr(priv bool) *syscall.SysProcAttr {
	uid, gid := ownerOf(priv)
	attr := &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: mappedIDs(priv)}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: mappedIDs(priv)}},
		// Root may keep setgroups, so that the init drops root's groups.
		GidMappingsEnableSetgroups: priv,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_NET_ADMIN,
			unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER, unix.CAP_CHOWN},
		Pdeathsig: syscall.SIGKILL,
		Setsid:    true,
	}
	return attr
}
