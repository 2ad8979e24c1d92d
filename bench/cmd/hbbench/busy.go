package main

import (
	"fmt"
	"os/exec"
	"syscall"
)

// busyLoop is what runs beside every timed command of a busy round, once
// per core: a plain shell loop, the kind of load a CI runner shares its
// cores with.
const busyLoop = "while :; do :; done"

// Where the busy loops run (-busy-session). With autogroups
// (/proc/sys/kernel/sched_autogroup_enabled = 1, Debian's and Ubuntu's
// default) the kernel shares the CPUs fairly between sessions first and
// between the threads of a session second:
//
//   - busyOwn: each loop in a session of its own (setsid), like a loop a
//     user starts in another shell or another job's process on a shared
//     runner: the timed command's session (with hbbench and the registry)
//     gets one share of the CPUs against one share per loop, however many
//     threads it runs. The default since issue 41: the outside
//     measurement's kind of load.
//   - busyShared: the loops in hbbench's session, so in the timed command's
//     autogroup, where the CPUs are shared per thread: a command running
//     more threads than there are loops takes most of the CPUs (the bench
//     before issue 41).
//
// Without autogroups the two are the same.
const (
	busyOwn    = "own"
	busyShared = "shared"
)

// busyLoops are the loops running beside one timed command.
type busyLoops []*exec.Cmd

// startBusy starts n busy loops, each in a session of its own (session
// busyOwn) or in hbbench's (busyShared). Each is killed by its PID when
// stop is called, and by the kernel should hbbench die first (Pdeathsig).
func startBusy(n int, session string) (busyLoops, error) {
	var loops busyLoops
	for range n {
		cmd := exec.Command("sh", "-c", busyLoop)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if session == busyOwn {
			// A new session is a new process group and a new autogroup.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		}
		if err := cmd.Start(); err != nil {
			loops.stop()
			return nil, fmt.Errorf("busy loop: %w", err)
		}
		loops = append(loops, cmd)
	}
	return loops, nil
}

func (l busyLoops) stop() {
	for _, cmd := range l {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// beside runs fn with n busy loops running (in session, see busyOwn), or
// alone when n is 0.
func beside(n int, session string, fn func() (sample, error)) (sample, error) {
	if n == 0 {
		return fn()
	}
	loops, err := startBusy(n, session)
	if err != nil {
		return sample{}, err
	}
	defer loops.stop()
	return fn()
}
