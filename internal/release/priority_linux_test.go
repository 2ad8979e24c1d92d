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
)

// threadNice reads the nice value of the calling OS thread.
func threadNice(t *testing.T) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", syscall.Gettid()))
	require.NoError(t, err)
	// Field 19 (nice) counts after the ")" that ends the command name.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[16])
	require.NoError(t, err)
	return n
}

// lowPriority runs fn at assemblyNice on a thread of its own and returns
// its error; the caller's thread keeps its priority.
func TestLowPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadNice(t)
	var inside int
	err := lowPriority(func() error {
		inside = threadNice(t)
		return errors.New("from fn")
	})
	assert.EqualError(t, err, "from fn")
	assert.Equal(t, max(before, assemblyNice), inside)
	assert.Equal(t, before, threadNice(t))
}
