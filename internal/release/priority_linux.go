package release

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// fallbackNice is the nice value layer work runs at when the scheduler
// refuses SCHED_IDLE (a seccomp filter, say): a nice 10 thread weighs a
// tenth of a nice 0 one.
const fallbackNice = 10

// lowPriority runs fn on an OS thread of its own under SCHED_IDLE, so the
// go build and link processes (which the cores are there for) take a core
// from it the moment they wake, and layer compression runs only in the time
// they leave. Under nice 10 (tried first in an earlier version) a waking
// linker thread still waited out the compressor's time slice; SCHED_IDLE
// tasks are preempted at once. On Linux both calls change only the calling
// thread. The goroutine exits still locked, which makes the runtime end the
// thread instead of reusing it at the lowered priority. A thread already at
// a lower priority stays as it is; if the priority cannot be changed, fn
// runs anyway.
func lowPriority(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with fn
		lowerThread()
		done <- fn()
	}()
	return <-done
}

// lowerThread moves the calling thread to SCHED_IDLE, or failing that to
// fallbackNice, never to a higher priority than it has.
func lowerThread() {
	attr, err := unix.SchedGetAttr(0, 0)
	if err == nil && attr.Policy == unix.SCHED_IDLE {
		return
	}
	if err == nil {
		idle := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
		if unix.SchedSetAttr(0, &idle, 0) == nil {
			return
		}
	}
	tid := syscall.Gettid()
	// The raw getpriority syscall returns 20-nice.
	if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-prio < fallbackNice {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, fallbackNice)
	}
}
