// Package pecheck tells, from an executable's bytes alone, whether it is a
// Windows console program for a given platform.
//
// [Check] reads the PE headers: an executable image (not a DLL), the machine
// the platform's architecture runs (platform.PEMachineOf) and the console
// subsystem a container's process needs. [GoInfo] reads a Go binary's
// embedded build settings, which [CheckGo] compares with the platform
// (GOOS=windows, GOARCH, GOAMD64). A mismatch is a [*MismatchError] that says
// what the binary is and what was wanted; input that is not PE wraps
// [ErrNotPE]. Nothing here panics on malformed input.
package pecheck
