//go:build unix

package crossbuild

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// killGroupOnCancel starts cmd in its own process group and, when its
// context ends, kills the whole group: `go build` runs compile and link
// children that would otherwise outlive it and hold its output pipe open.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = 5 * time.Second // backstop for a child that left the group
}
