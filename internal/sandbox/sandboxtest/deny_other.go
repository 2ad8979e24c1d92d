//go:build !linux

package sandboxtest

import "syscall"

// ownUserNamespace: user namespaces are Linux's, as is the sandbox (its
// Runner refuses to run elsewhere); the re-run then fails, naming its
// error, instead of this package failing to build on other systems.
func ownUserNamespace() *syscall.SysProcAttr { return nil }
