package release

import (
	"runtime"
	"syscall"
)

// assemblyNice is the nice value layer work runs at: the weight of a nice 10
// thread is a tenth of a nice 0 one, so a link sharing its core is hardly
// slowed, while the idle core of a lone link runs the compression at full
// speed.
const assemblyNice = 10

// lowPriority runs fn on an OS thread of its own at assemblyNice, so the
// go build and link processes (which the cores are there for) win every
// contended time slice, and layer compression runs in the time they leave.
// On Linux setpriority on a thread ID changes only that thread. The
// goroutine exits still locked, which makes the runtime end the thread
// instead of reusing it at the lowered priority. A thread already nicer
// stays as it is; if the priority cannot be changed, fn runs anyway.
func lowPriority(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with fn
		tid := syscall.Gettid()
		// The raw getpriority syscall returns 20-nice; never raise priority.
		if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-prio < assemblyNice {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, assemblyNice)
		}
		done <- fn()
	}()
	return <-done
}
