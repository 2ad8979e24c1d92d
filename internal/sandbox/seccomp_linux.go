package sandbox

import (
	"fmt"
	"slices"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	seccomparch "github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedCalls are the system calls a program's --version or start-up never
// needs and an escape would: they fail with EPERM. Names the host's table
// lacks (umount and vm86 exist on 32-bit x86 only, iopl on x86) are left
// out; requiredDenied must exist everywhere.
var deniedCalls = []string{
	// Nested namespaces (clone and unshare are refused only with a
	// namespace flag: see namespaceFlags).
	"setns",
	// Mounts, old API and new.
	"mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	// The kernel's keyrings.
	"keyctl", "add_key", "request_key",
	// eBPF, tracing and reading other processes.
	"bpf", "ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open",
	// Kernels and modules.
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	// Page-fault handling in user space, the usual tool to win kernel races.
	"userfaultfd",
	// io_uring: a second system call interface that seccomp cannot see into.
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	// The machine's state: reboot, swap, accounting, the kernel log, quotas,
	// the clock, I/O ports, file handles that bypass the mount tree.
	"reboot", "swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd", "lookup_dcookie",
	"settimeofday", "clock_settime", "clock_adjtime", "iopl", "ioperm", "vm86", "vm86old",
	"open_by_handle_at", "name_to_handle_at",
}

// requiredDenied are the calls of the list, which the filter must
// refuse on every host it is built for.
var requiredDenied = []string{"setns", "unshare", "clone", "clone3", "mount", "umount2", "pivot_root",
	"keyctl", "add_key", "request_key", "bpf", "ptrace", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "perf_event_open", "userfaultfd"}

// namespaceFlags are clone's and unshare's flags that make a namespace.
// CLONE_NEWTIME shares its bit with clone's exit signal, so only unshare
// refuses it.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// Actions of the filter.
const (
	deny   = seccomp.ActionErrno | seccomp.Action(unix.EPERM)
	absent = seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)
)

// filterProgram is the sandbox's seccomp filter for the host architecture
// (qemu-user turns a foreign program's calls into the host's, so the host's
// filter is the one that applies): a call entered through another ABI (i386
// or x32 on amd64, arm on arm64) fails with ENOSYS; clone3, whose flags a
// filter cannot read, fails with ENOSYS so that the C library falls back to
// clone; clone and unshare with a namespace flag and every deniedCalls call
// fail with EPERM; everything else is allowed.
func filterProgram() ([]bpf.Instruction, error) {
	host, err := seccomparch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("no seccomp filter for this architecture: %w", err)
	}
	if len(host.SyscallNames) == 0 {
		return nil, fmt.Errorf("no seccomp filter for %s: go-seccomp-bpf has no system call table for it", host.Name)
	}
	for _, n := range requiredDenied {
		if _, ok := host.SyscallNames[n]; !ok {
			return nil, fmt.Errorf("no seccomp filter for %s: its system call table lacks %s", host.Name, n)
		}
	}
	var names []string
	for _, n := range deniedCalls {
		if _, ok := host.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	nsFlag := func(name string, flags uint64) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: name, Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.BitsSet, Value: flags}}}
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: slices.Clip(names), Action: deny},
			{NamesWithCondtions: []seccomp.NameWithConditions{
				nsFlag("clone", namespaceFlags),
				nsFlag("unshare", namespaceFlags|unix.CLONE_NEWTIME),
			}, Action: deny},
			{Names: []string{"clone3"}, Action: absent},
		},
	}
	prog, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter for %s: %w", host.Name, err)
	}
	// go-seccomp-bpf sends a call of another architecture to the default
	// action, here allow: refuse those first.
	return append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(host.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(absent)},
	}, prog...), nil
}

// installFilter loads the filter into every thread of the calling process;
// no_new_privs must be set (confine sets it). The program the thread execs
// keeps it, and so does everything that program starts.
func installFilter() error {
	insts, err := filterProgram()
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	tid, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	switch {
	case e != 0:
		return e
	case tid != 0:
		return fmt.Errorf("thread %d could not take the filter", tid)
	}
	return nil
}
