package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// sample is one timed run.
type sample struct {
	Wall    time.Duration
	PeakRSS int64  // bytes: VmHWM of the started process itself (not its children); 0 if not sampled
	Up      counts // registry uploads during the run
	// CPU is the user+system time of the started process itself, without
	// its children (go build, the compiler, the linker); ChildCPU is theirs.
	// Both 0 when not measured.
	CPU, ChildCPU time.Duration
	// RegistryCPU is the CPU the docker-registry process used during the
	// run (its own user+system time, read before and after); 0 when not
	// measured.
	RegistryCPU time.Duration
	// Events are helperbuild's progress events (--progress json), and
	// Start the time the process was started; nil for other commands.
	Events []event
	Start  time.Time
	// Series is the CPU of the command's processes, the registry's and
	// hbbench's, sampled while it ran (procs.go); the last point is at
	// its exit. Nil when not sampled.
	Series []cpuPoint
}

// proc is one command to run and time.
type proc struct {
	Dir     string
	Env     []string // full environment
	Args    []string
	Log     *os.File // stdout and stderr are appended here
	Timeout time.Duration
	RSS     bool // sample VmHWM of the process every rssEvery, and its process tree's CPU
	// Registry is the PID of the registry serving the command (0: none),
	// whose CPU is sampled with the process tree's.
	Registry int
	// ProcEvery is how often the process tree's CPU is sampled (0: not).
	ProcEvery time.Duration
}

const rssEvery = 5 * time.Millisecond

// run starts p, waits for it (bounded by p.Timeout) and returns its wall
// time and, if asked, the peak resident set of the process itself: VmHWM
// from /proc/PID/status, sampled every 5 ms while it runs (VmHWM only
// grows, so only growth in the last few ms before exit can be missed). The
// rusage of wait4 is not used because it includes the children (the Go
// linker), which is not what "helperbuild's memory" means.
func run(ctx context.Context, p proc) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	cmd := exec.Command(p.Args[0], p.Args[1:]...)
	cmd.Dir, cmd.Env = p.Dir, p.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintf(p.Log, "\n$ (cd %s && %s)\n", p.Dir, strings.Join(p.Args, " "))
	start := time.Now()
	out := newStampWriter(p.Log, start)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	var peak, childCPU atomic.Int64
	tree := newProcTree(pid, p.Registry, start)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		if !p.RSS {
			return
		}
		path := "/proc/" + strconv.Itoa(pid) + "/status"
		t := time.NewTicker(rssEvery)
		defer t.Stop()
		stat := "/proc/" + strconv.Itoa(pid) + "/stat"
		for n := 0; ; n++ {
			if every := procEveryTicks(p.ProcEvery); every > 0 && n%every == 0 {
				tree.sample()
			}
			if v := vmHWM(path); v > peak.Load() {
				peak.Store(v)
			}
			if c := childTicks(stat); c > childCPU.Load() {
				childCPU.Store(c)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	var err error
	select {
	case err = <-waitErr:
	case <-ctx.Done():
		// Kill the process group we created (the command and its go build children).
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-waitErr
		err = fmt.Errorf("timed out after %s", p.Timeout)
	}
	wall := time.Since(start)
	close(done)
	<-sampled
	events := out.flush()
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w (log: %s)", strings.Join(p.Args, " "), err, p.Log.Name())
	}
	s := sample{Wall: wall, PeakRSS: peak.Load(), Events: events, Start: start}
	s.CPU, s.ChildCPU = splitCPU(cmd.ProcessState, childCPU.Load())
	if p.RSS && p.ProcEvery > 0 {
		tree.finish(wall, s.CPU)
		s.Series = tree.series
	}
	return s, nil
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// childTicks is the CPU time (cutime+cstime, in clock ticks) of the
// children the process at stat (/proc/PID/stat) has waited for; 0 if gone.
func childTicks(stat string) int64 { return statTicks(stat, 13, 14) }

// statTicks is the sum of two clock-tick fields of a /proc/PID/stat file,
// counted from field 3 (state) as 0: 11 and 12 are the process's own
// utime and stime, 13 and 14 its waited-for children's; 0 if gone.
func statTicks(stat string, a, b int) int64 {
	data, err := os.ReadFile(stat)
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it are fixed.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 15 {
		return 0
	}
	x, _ := strconv.ParseInt(f[a], 10, 64)
	y, _ := strconv.ParseInt(f[b], 10, 64)
	return x + y
}

// splitCPU splits the CPU time wait4 reports for a process (its own and
// that of the children it waited for) into its own and its children's,
// with children the children's time sampled last while it ran (in clock
// ticks): every go build ends before helperbuild's tail, so the last
// sample has them all, to within a tick.
func splitCPU(ps *os.ProcessState, children int64) (self, kids time.Duration) {
	if ps == nil {
		return 0, 0
	}
	total := ps.UserTime() + ps.SystemTime()
	kids = time.Duration(children) * clockTick
	return max(total-kids, 0), kids
}

// vmHWM reads the VmHWM line of a /proc/PID/status file, in bytes; 0 if the
// process is gone or has exited (a zombie has no memory lines).
func vmHWM(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
