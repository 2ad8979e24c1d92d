package main

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Children and memory of fork-memory.
const (
	memoryChildren = 50
	childMemory    = 100 << 20
)

// forkMemory forks memoryChildren children that each map childMemory bytes,
// write every page and then hold them until the parent ends. Once every
// child either holds its memory or has died, it exits 1 saying how many
// are which.
func forkMemory() {
	var ready, release [2]int
	if err := unix.Pipe2(ready[:], unix.O_CLOEXEC); err != nil {
		end("fork-memory", "pipe", err)
	}
	if err := unix.Pipe2(release[:], unix.O_CLOEXEC); err != nil {
		end("fork-memory", "pipe", err)
	}
	child := map[int]int{} // pid: index
	for i := 0; i < memoryChildren; i++ {
		pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			fmt.Printf("fork-memory: fork %d: %v\n", i+1, e)
			break
		}
		if pid == 0 {
			holdMemory(i, ready[1], release[0])
		}
		child[int(pid)] = i
	}
	unix.Close(ready[1])
	holds, died := map[int]bool{}, map[int]bool{}
	buf := make([]byte, memoryChildren)
	for len(child) > 0 && countDone(holds, died) < len(child) {
		// A child says it holds its memory, or it dies: wait for either.
		fds := []unix.PollFd{{Fd: int32(ready[0]), Events: unix.POLLIN}}
		_, _ = unix.Poll(fds, 100)
		if n, err := unix.Read(ready[0], buf); err == nil {
			for _, i := range buf[:n] {
				holds[int(i)] = !died[int(i)] // said so, then died
			}
		}
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err != nil || pid <= 0 {
				break
			}
			died[child[pid]] = true
			delete(holds, child[pid])
		}
	}
	fmt.Printf("fork-memory: %d of %d children hold %d MiB each, %d died\n", countDone(holds, died)-len(died), len(child), childMemory>>20, len(died))
	os.Exit(1)
}

// countDone counts the children that hold their memory or died.
func countDone(holds, died map[int]bool) int {
	n := len(died)
	for _, h := range holds {
		if h {
			n++
		}
	}
	return n
}

// holdMemory is a child: raw calls only (the Go runtime is not safe in a
// child of a raw clone). It maps and writes childMemory bytes, says so on
// ready (its index) and blocks reading release, which only the parent's end closes.
func holdMemory(i, ready, release int) {
	addr, _, e := unix.RawSyscall6(unix.SYS_MMAP, 0, childMemory, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uintptr(0), 0)
	if e != 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 3, 0, 0)
	}
	for off := uintptr(0); off < childMemory; off += 4096 {
		*(*byte)(unsafe.Pointer(addr + off)) = 1
	}
	b := [1]byte{byte(i)}
	unix.RawSyscall(unix.SYS_WRITE, uintptr(ready), uintptr(unsafe.Pointer(&b[0])), 1)
	unix.RawSyscall(unix.SYS_READ, uintptr(release), uintptr(unsafe.Pointer(&b[0])), 1)
	unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
}
