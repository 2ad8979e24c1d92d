package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// threadClass is a thread's scheduling policy and nice value.
type threadClass struct {
	policy uint32
	nice   int32
}

// classOf reads one thread's class with sched_getattr.
func classOf(tid int) (threadClass, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return threadClass{}, err
	}
	return threadClass{policy: attr.Policy, nice: attr.Nice}, nil
}

// otherClass lists every thread of this process whose class is not want:
// the threads are those in /proc/self/task, each read with sched_getattr
// (a thread that ended since the listing is skipped).
func otherClass(want threadClass) ([]string, error) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			return nil, err
		}
		c, err := classOf(tid)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("thread %d: %w", tid, err)
		}
		if c != want {
			out = append(out, fmt.Sprintf("thread %d: policy %d, nice %d", tid, c.policy, c.nice))
		}
	}
	return out, nil
}

// No thread of the process ever runs in another scheduling class or at
// another nice value than the one it started with: not while compiles run
// beside an assembly, not while the last platform is assembled, not after
// Build. (A thread at a lowered priority that runs Go code holds up every
// stop-the-world pause of the garbage collector while other processes
// keep the cores busy, so the whole release would wait on it.)
func TestNoThreadChangesClass(t *testing.T) {
	want, err := classOf(os.Getpid())
	require.NoError(t, err)
	// The check does see a thread in another class: a goroutine moves its
	// locked thread to SCHED_BATCH (same nice value) and, once seen, back.
	moved, back, restored := make(chan error), make(chan struct{}), make(chan error)
	go func() {
		runtime.LockOSThread()
		batch := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_BATCH, Nice: want.nice}
		if err := unix.SchedSetAttr(0, &batch, 0); err != nil {
			moved <- err
			return // still locked: the runtime ends the thread
		}
		moved <- nil
		<-back
		normal := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: want.policy, Nice: want.nice}
		err := unix.SchedSetAttr(0, &normal, 0)
		if err == nil {
			runtime.UnlockOSThread() // back in its class: the runtime may reuse it
		}
		restored <- err
	}()
	require.NoError(t, <-moved)
	other, err := otherClass(want)
	close(back)
	require.NoError(t, <-restored)
	require.NoError(t, err)
	require.Len(t, other, 1)
	assert.Contains(t, other[0], fmt.Sprintf("policy %d, nice %d", unix.SCHED_BATCH, want.nice))

	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64,linux/s390x")})
	require.NoError(t, err)
	opts := options(t)

	var mu sync.Mutex
	var found []string
	checks := 0
	check := func(when string) {
		other, err := otherClass(want)
		mu.Lock()
		defer mu.Unlock()
		checks++
		if err != nil {
			found = append(found, when+": "+err.Error())
		}
		for _, o := range other {
			found = append(found, when+": "+o)
		}
	}
	// The last compile to end waits until an assembly runs beside the
	// compiles, so the check sees one whatever the compiles' order.
	background := make(chan struct{})
	var backgroundOnce sync.Once
	compiled := 0
	opts.hooks = &hooks{
		compiled: func(ctx context.Context, p v1.Platform) {
			check("compiled " + platform.Format(p))
			mu.Lock()
			compiled++
			last := compiled == 3
			mu.Unlock()
			if last {
				select {
				case <-background:
				case <-ctx.Done():
				}
			}
		},
		assembling: func(_ context.Context, p v1.Platform, beside bool) {
			check(fmt.Sprintf("assembling %s (beside compiles: %t)", platform.Format(p), beside))
			if beside {
				backgroundOnce.Do(func() { close(background) })
			}
		},
	}
	_, err = Build(context.Background(), plan, opts)
	require.NoError(t, err)
	check("after Build")
	assert.Empty(t, found)
	assert.Equal(t, 3+3+1, checks, "three compiles, three assemblies, the end")
	select {
	case <-background:
	default:
		t.Error("no assembly ran beside the compiles")
	}
}
