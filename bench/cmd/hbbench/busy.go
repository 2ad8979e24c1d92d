package main

import (
	"fmt"
	"os/exec"
	"syscall"
)

// busyLoop is what runs beside every timed command of a busy round, once
// per core: a plain shell loop, the kind of load a CI runner shares its
// cores with. It stays in hbbench's session (so in the timed command's
// autogroup, where the kernel shares the cores out per thread, the
// harshest case).
const busyLoop = "while :; do :; done"

// busyLoops are the loops running beside one timed command.
type busyLoops []*exec.Cmd

// startBusy starts n busy loops. Each is killed by its PID when stop is
// called, and by the kernel should hbbench die first (Pdeathsig).
func startBusy(n int) (busyLoops, error) {
	var loops busyLoops
	for range n {
		cmd := exec.Command("sh", "-c", busyLoop)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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

// beside runs fn with n busy loops running, or alone when n is 0.
func beside(n int, fn func() (sample, error)) (sample, error) {
	if n == 0 {
		return fn()
	}
	loops, err := startBusy(n)
	if err != nil {
		return sample{}, err
	}
	defer loops.stop()
	return fn()
}
