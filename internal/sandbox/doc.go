// Package sandbox runs one program of an unpacked, untrusted image so that it
// cannot touch the machine running it, using Linux namespaces and no
// container runtime.
//
// Runner.Run starts the program in new user, mount, PID, network, IPC, UTS
// and cgroup namespaces:
//
//   - user: the program is uid/gid 0 inside; outside it is OutsideID when
//     helperbuild runs as root (no supplementary groups), else the caller's
//     own ids. Owner says who must own the unpacked tree. Root maps ids 0
//     to MappedIDs-1 onto OutsideID+n (HostID), so a tree can keep the
//     image's owners and Spec.User can run the program as another user
//     (uid, gid, groups), then with no capabilities at all.
//   - Spec.Mounts bind host files and directories in (nosuid, nodev,
//     read-only on request), after replacing whatever the image has in the
//     way in the overlay; Spec.Binfmt gives the sandbox a binfmt_misc of its
//     own (Linux 6.7+) so that programs a foreign program starts run under
//     the emulator and the host's entries never apply; Spec.Stdin feeds the
//     program's standard input.
//   - mount: the root is an overlay whose lower layer is Spec.Root and whose
//     upper layer is a private tmpfs of Limits.Writable bytes, so the program
//     may write anywhere and nothing it writes reaches Spec.Root, a later run
//     or the host; /proc (of the new PID namespace), /dev/null, /dev/zero,
//     /dev/random, /dev/urandom and a private /tmp are provided; the host's
//     filesystem is detached (pivot_root). A foreign program runs under
//     Spec.Emulator (qemu-user), bind-mounted read-only into the sandbox.
//   - network: only a loopback interface; PID: the program is PID 1, so when
//     it ends (or the context ends and it is killed) the kernel kills
//     everything it started; IPC, UTS (hostname "sandbox"), cgroup: private.
//
// The program gets exactly Spec.Env; of root's capabilities in its user
// namespace only chown, dac_override, fowner, setuid and setgid (no mount,
// no network administration); a fresh session keyring; no file descriptors
// but stdin (/dev/null), stdout and stderr; no_new_privs; a seccomp filter
// that refuses what a start-up never needs (nested namespaces, mounts,
// keyrings, bpf, ptrace, kexec, modules, perf events, userfaultfd, io_uring,
// another ABI's entry), built for the host's architecture, which is also
// what qemu-user's calls are; and the rlimits of Limits (CPU seconds,
// address space, processes, file size, open files). Where the caller's
// cgroup allows it (v2 delegating memory and pids, or v1), each run has a
// cgroup of its own that bounds the memory and the number of all its
// processes together, removed afterwards; Runner.TotalLimits says which,
// or why only the per-process limits apply.
//
// The namespaces are set up by the calling binary itself, re-executed through
// /proc/self/exe as the sandbox's init: every binary that uses Runner must
// call Init first thing in main (and in TestMain), which returns at once
// when the process is not a sandbox init.
//
// It fails closed: when the kernel refuses a namespace or a mount (user
// namespaces disabled, seccomp or AppArmor refusing them, a masked /proc),
// Run and Probe return an *UnavailableError (errors.Is ErrUnavailable) and
// nothing was run; there is no unsandboxed fallback. A program the kernel
// cannot execute is an *ExecError; a program that ran and failed is an
// *exec.ExitError.
package sandbox
