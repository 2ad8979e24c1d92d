package release

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// threadPolicy reads the scheduling policy of the calling OS thread from
// /proc, not through the syscall lowPriority uses.
func threadPolicy(t *testing.T) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", syscall.Gettid()))
	require.NoError(t, err)
	// Field 41 (policy) counts after the ")" that ends the command name,
	// which is field 2.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[41-3])
	require.NoError(t, err)
	return n
}

// lowPriority runs fn under SCHED_IDLE on a thread of its own and returns
// its error; the caller's thread keeps its policy.
func TestLowPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadPolicy(t)
	require.NotEqual(t, unix.SCHED_IDLE, before, "the test thread must start above SCHED_IDLE")
	var inside int
	err := lowPriority(func() error {
		inside = threadPolicy(t)
		return errors.New("from fn")
	})
	assert.EqualError(t, err, "from fn")
	assert.Equal(t, unix.SCHED_IDLE, inside)
	assert.Equal(t, before, threadPolicy(t))
}
