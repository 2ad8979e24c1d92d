package main

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedCalls attempt, under the name sys-NAME, one system call the
// sandbox's seccomp filter refuses, with arguments that would work (or
// fail for a reason of their own) without the filter; each returns the
// call's errno, 0 when it was allowed.
var deniedCalls = map[string]func() unix.Errno{
	// unshare(CLONE_NEWUSER) needs a single-threaded process.
	"unshare-user":  func() unix.Errno { return inChild(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0) },
	"unshare-mount": func() unix.Errno { return inChild(unix.SYS_UNSHARE, unix.CLONE_NEWNS, 0) },
	"clone-newuser": cloneNewUser,
	"clone3":        clone3,
	"setns": func() unix.Errno {
		fd, err := unix.Open("/proc/self/ns/uts", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err.(unix.Errno)
		}
		return raw(unix.SYS_SETNS, uintptr(fd), unix.CLONE_NEWUTS)
	},
	"mount":      func() unix.Errno { return raw(unix.SYS_MOUNT, str("tmpfs"), str("/tmp"), str("tmpfs"), 0, str("")) },
	"umount":     func() unix.Errno { return raw(unix.SYS_UMOUNT2, str("/proc"), unix.MNT_DETACH) },
	"pivot-root": func() unix.Errno { return raw(unix.SYS_PIVOT_ROOT, str("."), str(".")) },
	"keyctl":     func() unix.Errno { return raw(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, keySpecSession, 0) },
	"add-key": func() unix.Errno {
		return raw(unix.SYS_ADD_KEY, str("user"), str("adversary"), str("x"), 1, keySpecSession)
	},
	"request-key": func() unix.Errno { return raw(unix.SYS_REQUEST_KEY, str("user"), str("adversary"), 0, 0) },
	"bpf": func() unix.Errno {
		// BPF_MAP_CREATE of an array map: type, key size, value size, entries.
		attr := [16]uint32{2, 4, 4, 1}
		return raw(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	},
	"ptrace":          func() unix.Errno { return raw(unix.SYS_PTRACE, unix.PTRACE_TRACEME) },
	"kexec-load":      func() unix.Errno { return raw(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0) },
	"kexec-file-load": func() unix.Errno { return raw(unix.SYS_KEXEC_FILE_LOAD, ^uintptr(0), ^uintptr(0), 1, str(""), 0) },
	"init-module":     func() unix.Errno { return raw(unix.SYS_INIT_MODULE, 0, 0, str("")) },
	"finit-module":    func() unix.Errno { return raw(unix.SYS_FINIT_MODULE, ^uintptr(0), str(""), 0) },
	"delete-module":   func() unix.Errno { return raw(unix.SYS_DELETE_MODULE, str("adversary"), 0) },
	"perf-event-open": func() unix.Errno {
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		attr.Size = uint32(unsafe.Sizeof(attr))
		return raw(unix.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&attr)), 0, ^uintptr(0), ^uintptr(0), 0)
	},
	"userfaultfd": func() unix.Errno { return raw(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly) },
	"io-uring-setup": func() unix.Errno {
		var params [120]byte
		return raw(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])))
	},
}

const (
	keySpecSession   = ^uintptr(2) // KEY_SPEC_SESSION_KEYRING, -3
	uffdUserModeOnly = 1           // UFFD_USER_MODE_ONLY
)

// deniedCall runs sys-NAME and exits 1 with what happened.
func deniedCall(name string) {
	call, ok := deniedCalls[name[len("sys-"):]]
	if !ok {
		fmt.Printf("%s: no such call to try\n", name)
		os.Exit(2)
	}
	if e := call(); e != 0 {
		fmt.Printf("%s: refused: %v\n", name, e)
	} else {
		fmt.Printf("%s: allowed\n", name)
	}
	os.Exit(1)
}

func raw(nr uintptr, args ...uintptr) unix.Errno {
	var a [6]uintptr
	copy(a[:], args)
	_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	return e
}

// str is a NUL-terminated copy of s for a raw call; it is never freed.
func str(s string) uintptr {
	p, err := unix.BytePtrFromString(s)
	if err != nil {
		panic(err)
	}
	return uintptr(unsafe.Pointer(p))
}

// cloneNewUser forks into a new user namespace; a child exits at once, with
// raw calls only (the Go runtime is not safe in a child of a raw clone).
func cloneNewUser() unix.Errno {
	pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(int(pid), &ws, 0, nil)
	return 0
}

// clone3 forks into a new user namespace with clone3, whose flags a filter
// cannot read.
func clone3() unix.Errno {
	// struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal,
	// stack, stack_size, tls.
	args := [8]uint64{unix.CLONE_NEWUSER, 0, 0, 0, uint64(unix.SIGCHLD)}
	pid, _, e := unix.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args), 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(int(pid), &ws, 0, nil)
	return 0
}

// inChild makes the call in a child of a raw fork, which has one thread,
// and returns the errno the child exits with.
func inChild(nr, a0, a1 uintptr) unix.Errno {
	pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		_, _, e := unix.RawSyscall(nr, a0, a1, 0)
		unix.RawSyscall(unix.SYS_EXIT_GROUP, uintptr(e), 0, 0)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(int(pid), &ws, 0, nil); err != nil {
		return err.(unix.Errno)
	}
	return unix.Errno(ws.ExitStatus())
}
