package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// emulatorPath is where the emulator is bind-mounted inside the sandbox.
const emulatorPath = "/dev/.helperbuild-emulator"

// OutsideID is the uid and gid the sandbox's root is outside it when the
// caller may map it (root, in a user namespace that has it): one no
// account, service or container range uses (systemd's UIDS-GIDS.md leaves
// 1879048192-2147352575 unassigned), so nothing on the host belongs to it.
const OutsideID = 1879048192

// Owner returns the host uid and gid that must own Spec.Root's files for the
// sandbox's root to read, run and (in its overlay) change them: OutsideID
// for root, else the caller's own ids.
func Owner() (uid, gid int) {
	return ownerOf(privileged())
}

// ownerOf is Owner for a caller that already knows whether it is
// privileged.
func ownerOf(priv bool) (uid, gid int) {
	if priv {
		return OutsideID, OutsideID
	}
	return os.Geteuid(), os.Getegid()
}

// privileged reports whether the caller can map the sandbox's root to
// OutsideID: it is root and OutsideID exists in its user namespace (not so
// in a rootless container, whose root is an ordinary user outside).
func privileged() bool {
	return os.Geteuid() == 0 && mapped("/proc/self/uid_map", OutsideID) && mapped("/proc/self/gid_map", OutsideID)
}

// mapped reports whether id is inside one of the ranges of an id map.
func mapped(file string, id uint64) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		var inside, outside, n uint64
		if _, err := fmt.Sscan(line, &inside, &outside, &n); err == nil && inside <= id && id-inside < n {
			return true
		}
	}
	return false
}

// Spec is one program to run.
type Spec struct {
	// Root is the directory holding the image's unpacked filesystem, owned
	// by Owner(). It is only read: it is the lower layer of an overlay.
	Root string
	// Path is the program's absolute path inside Root; it is also argv[0].
	Path string
	// Args are the program's arguments after argv[0].
	Args []string
	// Env is the program's whole environment.
	Env []string
	// Dir is the working directory inside Root; "" means "/".
	Dir string
	// Emulator is the host path of a statically linked qemu-user binary to
	// run Path under; "" runs Path natively.
	Emulator string
	// Limits bound what the program may use; zero fields take defaults.
	Limits Limits
	// Stdout and Stderr receive the program's output; nil discards it.
	Stdout, Stderr io.Writer
	// Stdin is the program's standard input; nil is /dev/null.
	Stdin io.Reader
	// User, when set, runs the program as that user instead of root, with
	// no capabilities at all. Only a privileged caller (Owner is
	// OutsideID) can: the ids must be mapped (HostID).
	User *User
	// Mounts are host files and directories bound into the sandbox.
	Mounts []Mount
	// Binfmt, when set, gives the sandbox a binfmt_misc of its own (Linux
	// 6.7 or later) holding only this entry, with Emulator as its
	// interpreter: programs the program starts run under the emulator
	// too, and the host's binfmt_misc entries do not apply.
	Binfmt *Binfmt
}

// Limits are the resource limits of one run. Processes, address space, file
// size and open files are rlimits, so they hold per process; CPU time is per
// process too (a fork bomb ends at Processes). Writable bounds everything
// written into the sandbox's filesystem together. Where the run gets a
// cgroup of its own (Runner.TotalLimits), Memory bounds the memory of all
// its processes together (with what they write, which is held in memory)
// and Processes also bounds their total.
type Limits struct {
	CPU          time.Duration // RLIMIT_CPU, rounded up to seconds; default 60s
	AddressSpace uint64        // RLIMIT_AS in bytes; default 8 GiB (qemu-user reserves 4 GiB for 32-bit guests)
	Processes    uint64        // RLIMIT_NPROC: processes and threads; default 256
	FileSize     uint64        // RLIMIT_FSIZE in bytes; default 256 MiB
	OpenFiles    uint64        // RLIMIT_NOFILE; default 1024
	Writable     uint64        // bytes the program may write to its filesystem and /tmp; default 256 MiB
	Memory       uint64        // bytes of memory of all the run's processes together; default 1 GiB
}

func (l Limits) withDefaults() Limits {
	def := func(v *uint64, d uint64) {
		if *v == 0 {
			*v = d
		}
	}
	if l.CPU <= 0 {
		l.CPU = 60 * time.Second
	}
	def(&l.AddressSpace, 8<<30)
	def(&l.Processes, 256)
	def(&l.FileSize, 256<<20)
	def(&l.OpenFiles, 1024)
	def(&l.Writable, 256<<20)
	def(&l.Memory, 1<<30)
	return l
}

// Runner starts sandboxes. The zero value is ready to use.
type Runner struct {
	// Started, when set, is called with the host PID of each sandbox's first
	// process once it runs and before the program starts; tests use it to
	// check that nothing outlives a run.
	Started func(pid int)
}

// ErrUnavailable is what every *UnavailableError is (errors.Is).
var ErrUnavailable = errors.New("no sandbox for the image's programs")

// UnavailableError says that the kernel refused to make the sandbox, at
// which step and why; nothing was run.
type UnavailableError struct {
	Step string
	Err  error
}

func (e *UnavailableError) Error() string {
	if errors.Is(e.Err, errNotLinux) {
		return fmt.Sprintf("%v (%s: %v), so nothing was run: run it on Linux (a VM or a CI job), where the other checks give the same results",
			ErrUnavailable, e.Step, e.Err)
	}
	why := ""
	switch {
	case errors.Is(e.Err, syscall.ENOSPC):
		why = ": the user namespace limit is 0 or used up"
	case errors.Is(e.Err, syscall.EPERM), errors.Is(e.Err, syscall.EACCES):
		why = ": refused (seccomp, AppArmor, kernel.unprivileged_userns_clone=0, a restricted container)"
	case errors.Is(e.Err, syscall.EUSERS):
		why = ": user namespaces nest too deep here"
	}
	return fmt.Sprintf("%v (%s: %v%s), so nothing was run: allow user namespaces (sysctl user.max_user_namespaces=15000, "+
		"and kernel.unprivileged_userns_clone=1 where it exists) or run this in a VM or in a container whose seccomp "+
		"and AppArmor profiles allow unshare and mount", ErrUnavailable, e.Step, e.Err, why)
}

func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// ExecError says that the sandbox was made but the kernel (or the emulator)
// could not execute the program: a missing file, a missing ELF interpreter,
// a file that is not executable.
type ExecError struct {
	Path string
	Err  error
}

func (e *ExecError) Error() string {
	msg := fmt.Sprintf("exec %s: %v", e.Path, e.Err)
	if errors.Is(e.Err, syscall.ENOENT) {
		msg += " (the file or its ELF interpreter is missing)"
	}
	return msg
}

func (e *ExecError) Unwrap() error { return e.Err }

// errNotLinux is why there is no sandbox on another operating system.
var errNotLinux = fmt.Errorf("the sandbox is made of Linux namespaces, and this is %s", runtime.GOOS)
