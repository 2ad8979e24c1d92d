// Package crossbuild runs one `go build` per (main package, platform) target,
// in parallel with a fixed bound, and reports failures in terms of the target.
//
// Every target gets the caller's environment with the platform's GOOS,
// GOARCH and GOARM/GOAMD64 appended last (see [Env]), so nothing inherited
// can change what is built; CGO_ENABLED defaults to 0 and -trimpath is always
// passed, for reproducible static binaries. Everything that can be checked
// without running the compiler (options, platforms, two targets writing the
// same file) is checked before the first build starts. The first failure
// cancels the builds still running; its error names the main package and the
// platform and carries the compiler's output. Cancelling the caller's context
// kills the running builds (with their child processes) and Build returns the
// context's error.
package crossbuild
