//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// initArg0 is the argv[0] that makes a re-executed binary the sandbox's init.
const initArg0 = "helperbuild-sandbox-init"

// The init's file descriptors (Runner.start's ExtraFiles).
const (
	fdConfig = 3
	fdReport = 4
)

// Report stages besides the setup steps, which name themselves.
const (
	stageReady = "ready" // set up; exec follows
	stageExec  = "exec"  // exec failed
	stageProbe = "probe" // set up, and nothing to run
)

// initConfig is what Runner.start tells the init.
type initConfig struct {
	Path       string
	Args       []string
	Env        []string
	Dir        string
	Emulator   string // host path of the emulator, "" for none
	DropGroups bool   // drop the supplementary groups (allowed for root only)
	Limits     Limits
	Probe      bool
	User       *User
	Mounts     []Mount
	// PrivateBinfmt mounts a binfmt_misc of the sandbox's own; Binfmt is
	// its one register line ("" for none).
	PrivateBinfmt bool
	Binfmt        string
}

// report is one line the init writes on fd 4.
type report struct {
	Stage string `json:"stage"`
	Errno int    `json:"errno,omitempty"`
	Msg   string `json:"msg,omitempty"`
}

func (r report) err() error {
	if r.Errno != 0 {
		return syscall.Errno(r.Errno)
	}
	return errors.New(r.Msg)
}

// stepError is a setup step that failed.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }

func step(name string, err error) error {
	if err == nil {
		return nil
	}
	return &stepError{step: name, err: err}
}

// Init runs the sandbox's init when this process is one (argv[0] says so)
// and returns its exit code with ok true; it only returns when the setup or
// the exec failed, which it has reported to the parent. Otherwise ok is
// false and the caller goes on with its main. Call it first in main and in
// TestMain of every binary and test that uses Runner.
func Init(args []string) (code int, ok bool) {
	if len(args) == 0 || args[0] != initArg0 {
		return 0, false
	}
	return runInit(), true
}

func runInit() int {
	// Capabilities are per thread: set them on the one that execs.
	runtime.LockOSThread()
	unix.CloseOnExec(fdReport)
	enc := json.NewEncoder(os.NewFile(fdReport, "report"))
	// fail reports err under the step that failed (or stage) and ends.
	fail := func(stage string, err error) int {
		var se *stepError
		if errors.As(err, &se) {
			stage, err = se.step, se.err
		}
		rep := report{Stage: stage, Msg: err.Error()}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			rep.Errno = int(errno)
		}
		_ = enc.Encode(rep)
		return 127
	}
	var cfg initConfig
	cf := os.NewFile(fdConfig, "config")
	if err := json.NewDecoder(io.LimitReader(cf, 16<<20)).Decode(&cfg); err != nil {
		return fail("read the configuration", err)
	}
	cf.Close()
	h, err := openHost(cfg)
	if err != nil {
		return fail("open the image", err)
	}
	if err := becomeRoot(cfg.DropGroups); err != nil {
		return fail("become root in the user namespace", err)
	}
	// Changing the uid cleared the parent-death signal; a parent that died
	// before this is seen when the ready report cannot be written.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fail("set the parent-death signal", err)
	}
	if err := setup(cfg, h); err != nil {
		return fail("set up", err)
	}
	if cfg.Probe {
		_ = enc.Encode(report{Stage: stageProbe})
		return 0
	}
	if err := confine(cfg.Limits); err != nil {
		return fail("confine", err)
	}
	if cfg.User != nil {
		if err := becomeUser(*cfg.User); err != nil {
			return fail(fmt.Sprintf("become uid %d", cfg.User.UID), err)
		}
	}
	dir := cfg.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fail(stageExec, err)
	}
	argv0, argv := cfg.Path, append([]string{cfg.Path}, cfg.Args...)
	if cfg.Emulator != "" {
		argv0, argv = emulatorPath, append([]string{filepath.Base(cfg.Emulator), "-0", cfg.Path, cfg.Path}, cfg.Args...)
	}
	// Last: the filter applies to the init's own calls from here on.
	if err := installFilter(); err != nil {
		return fail("install the seccomp filter", err)
	}
	if err := enc.Encode(report{Stage: stageReady}); err != nil {
		return 127 // the parent is gone: run nothing
	}
	err = syscall.Exec(argv0, argv, cfg.Env)
	return fail(stageExec, err)
}

// host holds what the init opened of the host's filesystem, as O_PATH
// descriptors of mounts in its own mount namespace (mount and overlay
// refuse those of another): the image's root and the emulator.
type host struct {
	root, emulator int
	mounts         []int // Spec.Mounts' sources, in order
}

// openHost opens the working directory (the image's root) and the emulator
// while the init still has the caller's kernel uid.
func openHost(cfg initConfig) (host, error) {
	h := host{emulator: -1}
	var err error
	if h.root, err = unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return h, err
	}
	if cfg.Emulator != "" {
		if h.emulator, err = unix.Open(cfg.Emulator, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
			return h, &os.PathError{Op: "open", Path: cfg.Emulator, Err: err}
		}
	}
	for _, m := range cfg.Mounts {
		fd, err := unix.Open(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return h, &os.PathError{Op: "open", Path: m.Source, Err: err}
		}
		h.mounts = append(h.mounts, fd)
	}
	return h, nil
}

// becomeRoot makes the init the user namespace's root (the sandbox's uid
// outside), without the caller's supplementary groups when it may drop them.
func becomeRoot(dropGroups bool) error {
	if dropGroups {
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
	}
	if err := syscall.Setresgid(0, 0, 0); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	if err := syscall.Setresuid(0, 0, 0); err != nil {
		return fmt.Errorf("setresuid: %w", err)
	}
	return nil
}

// setup builds the sandbox's filesystem and network and moves into it.
func setup(cfg initConfig, h host) error {
	stage := "/tmp" // a tmpfs is mounted here, in this mount namespace only
	root := filepath.Join(stage, "root")
	if err := step("make mounts private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")); err != nil {
		return err
	}
	if err := mountRoot(stage, root, h.root, cfg.Limits.Writable); err != nil {
		return err
	}
	if err := mountSpecial(stage, root); err != nil {
		return err
	}
	if h.emulator >= 0 {
		if err := mountEmulator(filepath.Join(root, emulatorPath), h.emulator); err != nil {
			return err
		}
	}
	for i, m := range cfg.Mounts {
		if err := bindInto(root, m, h.mounts[i]); err != nil {
			return err
		}
	}
	if err := step("set the hostname", unix.Sethostname([]byte("sandbox"))); err != nil {
		return err
	}
	if err := step("bring up loopback", loopbackUp()); err != nil {
		return err
	}
	if err := pivot(root); err != nil {
		return err
	}
	if cfg.PrivateBinfmt {
		return privateBinfmt(cfg.Binfmt)
	}
	return nil
}

// programCaps are the capabilities the program keeps in its user namespace:
// a root's ordinary file and identity powers, not mount or network
// administration (the init's other ambient capabilities).
const programCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETUID

// confine applies what the program itself is held to: only programCaps, a
// session keyring of its own (not the caller's), no_new_privs (so exec
// grants nothing more), the rlimits, and no file descriptor beyond 0-2.
func confine(l Limits) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return step("read capabilities", err)
	}
	caps[0].Effective &= programCaps
	caps[0].Permitted &= programCaps
	caps[0].Inheritable &= programCaps
	caps[1] = unix.CapUserData{}
	if err := step("drop capabilities", unix.Capset(&hdr, &caps[0])); err != nil {
		return err
	}
	_, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	if e != 0 && e != unix.ENOSYS {
		return step("join a new session keyring", e)
	}
	if err := step("set no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)); err != nil {
		return err
	}
	cpu := uint64((l.CPU + 999_999_999) / 1_000_000_000)
	limits := []struct {
		name     string
		res      int
		cur, max uint64
	}{
		{"CPU", unix.RLIMIT_CPU, cpu, cpu + 1}, // SIGXCPU, then SIGKILL a second later
		{"AS", unix.RLIMIT_AS, l.AddressSpace, l.AddressSpace},
		{"NPROC", unix.RLIMIT_NPROC, l.Processes, l.Processes},
		{"FSIZE", unix.RLIMIT_FSIZE, l.FileSize, l.FileSize},
		{"NOFILE", unix.RLIMIT_NOFILE, l.OpenFiles, l.OpenFiles},
	}
	for _, lim := range limits {
		var old unix.Rlimit
		if err := unix.Getrlimit(lim.res, &old); err != nil {
			return step("get RLIMIT_"+lim.name, err)
		}
		// The hard limit can only go down in a user namespace.
		r := unix.Rlimit{Cur: min(lim.cur, old.Max), Max: min(lim.max, old.Max)}
		if err := unix.Setrlimit(lim.res, &r); err != nil {
			return step(fmt.Sprintf("set RLIMIT_%s to %d", lim.name, lim.cur), err)
		}
	}
	return step("close inherited descriptors", closeFrom(3))
}

// closeFrom marks every descriptor from fd up close-on-exec.
func closeFrom(fd int) error {
	err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil || (err != unix.ENOSYS && err != unix.EINVAL) {
		return err
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscan(e.Name(), &n); err == nil && n >= fd {
			unix.CloseOnExec(n)
		}
	}
	return nil
}

// loopbackUp brings up lo, the only interface of the new network namespace.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
}
