package main

import "golang.org/x/sys/unix"

func init() {
	// getpid through the i386 ABI (int $0x80, call 20) and the x32 ABI.
	deniedCalls["i386"] = func() unix.Errno { return int80(20) }
	deniedCalls["x32"] = func() unix.Errno { return raw(unix.SYS_GETPID | 0x40000000) }
}

// int80 makes system call nr through int $0x80 with no arguments and
// returns its errno.
func int80(nr uint32) unix.Errno {
	r := int80raw(nr)
	if r < 0 && r > -4096 {
		return unix.Errno(-r)
	}
	return 0
}

func int80raw(nr uint32) int32
