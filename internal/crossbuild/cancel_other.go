//go:build !unix

package crossbuild

import (
	"os/exec"
	"time"
)

// killGroupOnCancel kills only the go command itself when its context ends
// and stops waiting for its output pipes shortly after.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.WaitDelay = 5 * time.Second
}
