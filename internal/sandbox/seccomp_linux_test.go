package sandbox

import (
	"encoding/binary"
	"testing"

	seccomparch "github.com/elastic/go-seccomp-bpf/arch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is the kernel's struct seccomp_data as the filter reads it:
// every 32-bit word is loaded in host order, which x/net/bpf's VM reads as
// big-endian, so each word is written big-endian at the offset the kernel
// has it (the low half of an argument first on a little-endian host).
func seccompData(nr int, auditArch uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], uint32(nr))
	binary.BigEndian.PutUint32(b[4:], auditArch)
	for i, a := range args {
		off := 16 + 8*i
		binary.BigEndian.PutUint32(b[off:], uint32(a))
		binary.BigEndian.PutUint32(b[off+4:], uint32(a>>32))
	}
	return b
}

// The filter's decisions, run in a BPF interpreter: every call of the
// issue's list refused, clone and unshare refused only with a namespace
// flag, clone3 absent, other ABIs absent, ordinary calls allowed.
func TestFilterDecisions(t *testing.T) {
	host, err := seccomparch.GetInfo("")
	require.NoError(t, err)
	insts, err := filterProgram()
	require.NoError(t, err)
	vm, err := bpf.NewVM(insts)
	require.NoError(t, err)
	decide := func(t *testing.T, nr int, auditArch uint32, args ...uint64) uint32 {
		t.Helper()
		v, err := vm.Run(seccompData(nr, auditArch, args...))
		require.NoError(t, err)
		return uint32(v)
	}
	allow, eperm, enosys := uint32(unix.SECCOMP_RET_ALLOW), uint32(unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)), uint32(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	hostArch := uint32(host.ID)

	for _, name := range requiredDenied {
		if name == "clone" || name == "unshare" || name == "clone3" {
			continue
		}
		assert.Equal(t, eperm, decide(t, host.SyscallNames[name], hostArch), name)
	}
	for _, name := range deniedCalls {
		if nr, ok := host.SyscallNames[name]; ok {
			assert.Equal(t, eperm, decide(t, nr, hostArch), name)
		}
	}
	clone, unshare := host.SyscallNames["clone"], host.SyscallNames["unshare"]
	thread := uint64(unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_SYSVSEM | unix.CLONE_THREAD)
	assert.Equal(t, allow, decide(t, clone, hostArch, thread), "a thread")
	assert.Equal(t, allow, decide(t, clone, hostArch, uint64(unix.SIGCHLD)), "a fork")
	for _, f := range []uint64{unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWCGROUP} {
		assert.Equal(t, eperm, decide(t, clone, hostArch, f|uint64(unix.SIGCHLD)), "clone %#x", f)
		assert.Equal(t, eperm, decide(t, unshare, hostArch, f), "unshare %#x", f)
	}
	assert.Equal(t, eperm, decide(t, unshare, hostArch, unix.CLONE_NEWTIME), "unshare CLONE_NEWTIME")
	assert.Equal(t, allow, decide(t, unshare, hostArch, unix.CLONE_FS|unix.CLONE_FILES), "unshare without a namespace")
	assert.Equal(t, enosys, decide(t, host.SyscallNames["clone3"], hostArch), "clone3: the C library falls back to clone")
	for _, name := range []string{"read", "write", "mmap", "execve", "exit_group", "prctl", "seccomp", "wait4"} {
		assert.Equal(t, allow, decide(t, host.SyscallNames[name], hostArch), name)
	}

	// Another ABI's entry: its numbers mean other calls, so none is allowed.
	for _, other := range []*seccomparch.Info{seccomparch.I386, seccomparch.ARM, seccomparch.AARCH64, seccomparch.X86_64} {
		if other.ID == host.ID {
			continue
		}
		for _, name := range []string{"getpid", "write", "exit_group"} {
			if nr, ok := other.SyscallNames[name]; ok {
				assert.Equal(t, enosys, decide(t, nr, uint32(other.ID)), "%s %s", other.Name, name)
			}
		}
	}
	if host.ID == seccomparch.X86_64.ID {
		assert.Equal(t, enosys, decide(t, seccomparch.X32.SyscallNames["getpid"]|seccomparch.X32.SeccompMask, hostArch), "x32 getpid")
	}
}
