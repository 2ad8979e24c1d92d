//go:build !unix

package verify

import "syscall"

// limitSignal is "": no rlimit signals here (verify --run needs Linux).
func limitSignal(syscall.Signal) string { return "" }
