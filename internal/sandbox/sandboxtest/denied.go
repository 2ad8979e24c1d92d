package sandboxtest

import (
	"slices"
	"syscall"
)

// DeniedCall is one system call the sandbox's seccomp filter refuses, as
// the adversary makes it under the name sys-Name, and the errnos that count
// as refused: the filter's, and under qemu-user also qemu's own answer for
// a call it does not pass on to the host.
type DeniedCall struct {
	Name   string
	Errnos []syscall.Errno
}

// Wants are the adversary's possible lines for the refused call.
func (c DeniedCall) Wants() []string {
	var out []string
	for _, e := range c.Errnos {
		out = append(out, "sys-"+c.Name+": refused: "+e.Error())
	}
	return out
}

// Refused reports whether line is one of Wants.
func (c DeniedCall) Refused(line string) bool { return slices.Contains(c.Wants(), line) }

// qemuAnswers are the errnos qemu-user 7.2 (Debian 12) gives its guest
// itself, without a host call, for the calls it does not implement
// (ENOSYS) and for clone with namespace flags (EINVAL); the other calls
// (unshare, setns, the mounts, clone3) reach the host's filter.
var qemuAnswers = map[string]syscall.Errno{
	"clone-newuser": syscall.EINVAL, "keyctl": syscall.ENOSYS, "add-key": syscall.ENOSYS, "request-key": syscall.ENOSYS,
	"bpf": syscall.ENOSYS, "ptrace": syscall.ENOSYS, "kexec-load": syscall.ENOSYS, "kexec-file-load": syscall.ENOSYS,
	"init-module": syscall.ENOSYS, "finit-module": syscall.ENOSYS, "delete-module": syscall.ENOSYS,
	"perf-event-open": syscall.ENOSYS, "userfaultfd": syscall.ENOSYS, "io-uring-setup": syscall.ENOSYS,
}

// DeniedCalls lists the calls the adversary built for goarch makes, run
// natively (amd64) or under qemu-user (every other goarch), each with the
// errno the filter gives: EPERM; ENOSYS for clone3 (so the C library falls
// back to clone) and for another ABI's entry (i386 and x32 on amd64).
// Under qemu, qemu's own refusal of a call counts too (qemuAnswers).
func DeniedCalls(goarch string) []DeniedCall {
	var out []DeniedCall
	for _, n := range []string{"unshare-user", "unshare-mount", "clone-newuser", "setns", "mount", "umount", "pivot-root",
		"keyctl", "add-key", "request-key", "bpf", "ptrace", "kexec-load", "kexec-file-load",
		"init-module", "finit-module", "delete-module", "perf-event-open", "userfaultfd", "io-uring-setup"} {
		c := DeniedCall{Name: n, Errnos: []syscall.Errno{syscall.EPERM}}
		if e, ok := qemuAnswers[n]; ok && goarch != "amd64" {
			c.Errnos = append(c.Errnos, e)
		}
		out = append(out, c)
	}
	out = append(out, DeniedCall{Name: "clone3", Errnos: []syscall.Errno{syscall.ENOSYS}})
	if goarch == "amd64" {
		out = append(out, DeniedCall{Name: "i386", Errnos: []syscall.Errno{syscall.ENOSYS}}, DeniedCall{Name: "x32", Errnos: []syscall.Errno{syscall.ENOSYS}})
	}
	return out
}
