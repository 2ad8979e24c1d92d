package sandbox

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Outside Linux, Run and Probe return this error: it says that --run needs
// Linux, not how to allow user namespaces.
func TestUnavailableOutsideLinux(t *testing.T) {
	err := &UnavailableError{Step: "create namespaces", Err: errNotLinux}
	assert.True(t, errors.Is(err, ErrUnavailable))
	assert.Equal(t, "no sandbox for the image's programs (create namespaces: the sandbox is made of Linux namespaces, and this is "+runtime.GOOS+
		"), so nothing was run: run it on Linux (a VM or a CI job), where the other checks give the same results", err.Error())
}
