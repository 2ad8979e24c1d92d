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
// write every page and then hold them until the parent ends; it counts the
// children that got there and those that died on the way, and exits 1 with
// the numbers once every child is one or the other.
func forkMemory() {
	var ready, release [2]int
	if err := unix.Pipe2(ready[:], unix.O_CLOEXEC); err != nil {
		end("fork-memory", "pipe", err)
	}
	if err := unix.Pipe2(release[:], unix.O_CLOEXEC); err != nil {
		end("fork-memory", "pipe", err)
	}
	forked := 0
	for ; forked < memoryChildren; forked++ {
		pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			fmt.Printf("fork-memory: fork %d: %v\n", forked+1, e)
			break
		}
		if pid == 0 {
			holdMemory(ready[1], release[0])
		}
	}
	unix.Close(ready[1])
	held, died := 0, 0
	buf := make([]byte, memoryChildren)
	for held+died < forked {
		// A child says it holds its memory, or it dies: wait for either.
		fds := []unix.PollFd{{Fd: int32(ready[0]), Events: unix.POLLIN}}
		_, _ = unix.Poll(fds, 100)
		if n, err := unix.Read(ready[0], buf); err == nil {
			held += n
		}
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err != nil || pid <= 0 {
				break
			}
			died++
		}
	}
	fmt.Printf("fork-memory: %d of %d children held %d MiB each, %d died\n", held, forked, childMemory>>20, died)
	os.Exit(1)
}

// holdMemory is a child: raw calls only (the Go runtime is not safe in a
// child of a raw clone). It maps and writes childMemory bytes, says so on
// ready and blocks reading release, which only the parent's end closes.
func holdMemory(ready, release int) {
	addr, _, e := unix.RawSyscall6(unix.SYS_MMAP, 0, childMemory, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uintptr(0), 0)
	if e != 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 3, 0, 0)
	}
	for off := uintptr(0); off < childMemory; off += 4096 {
		*(*byte)(unsafe.Pointer(addr + off)) = 1
	}
	b := [1]byte{'r'}
	unix.RawSyscall(unix.SYS_WRITE, uintptr(ready), uintptr(unsafe.Pointer(&b[0])), 1)
	unix.RawSyscall(unix.SYS_READ, uintptr(release), uintptr(unsafe.Pointer(&b[0])), 1)
	unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
}
