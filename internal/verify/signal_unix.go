//go:build unix

package verify

import "syscall"

// limitSignal says which rlimit a program that sig killed ran into, or "".
func limitSignal(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGXCPU:
		return "used up its CPU time limit (SIGXCPU)"
	case syscall.SIGXFSZ:
		return "wrote a file over its size limit (SIGXFSZ)"
	}
	return ""
}
