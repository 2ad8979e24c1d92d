package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The processes whose CPU a timed run is split into (issue 41): the timed
// command itself (helperbuild or ko), its go commands, the compilers and
// linkers they run, any other descendant (asm, git, ...), the registry
// serving the run, and hbbench itself (its counting proxy copies every
// request, and its samplers read /proc).
const (
	cpuSelf = iota
	cpuGo
	cpuCompile
	cpuLink
	cpuOther
	cpuRegistry
	cpuHarness
	cpuClasses
)

var cpuClassNames = [cpuClasses]string{"the command itself", "go commands", "compile", "link", "other children", "registry", "hbbench (proxy, sampling)"}

// cpuPoint is the CPU time, in clock ticks, each class had used at T after
// the command started.
type cpuPoint struct {
	T     time.Duration
	Ticks [cpuClasses]int64
}

// The process tree is walked every -proc-every (100 ms by default, a
// multiple of the 5 ms RSS sampling), which catches every go command and
// link and the longer compiles; what it misses (shorter processes, the
// last ticks of each) is counted by wait4 in the command's children's
// total and shown as the difference. Walking costs hbbench CPU (a read per
// thread of every process in the tree), shown in its own row: a one-core
// smoke run at 20 ms cost hbbench 0.1 s per second of the run, in the
// command's session.

// procTree samples the CPU of a command's process tree, of the registry
// and of hbbench, and keeps a series of points for the phases.
type procTree struct {
	root, registry int
	start          time.Time
	harness0       int64            // hbbench's ticks at the start
	registry0      int64            // the registry's
	seen           map[int]procSeen // every descendant ever seen
	series         []cpuPoint
}

type procSeen struct {
	class int
	ticks int64 // own utime+stime at the last sample
}

func newProcTree(root, registry int, start time.Time) *procTree {
	t := &procTree{root: root, registry: registry, start: start, harness0: selfTicks(), seen: map[int]procSeen{}}
	if registry > 0 {
		t.registry0 = statTicks(procStat(registry), 11, 12)
	}
	return t
}

// selfTicks is hbbench's own user+system time in clock ticks.
func selfTicks() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	us := ru.Utime.Sec*1e6 + ru.Utime.Usec + ru.Stime.Sec*1e6 + ru.Stime.Usec
	return us / int64(clockTick/time.Microsecond)
}

// procEveryTicks is -proc-every in RSS samples; 0: never.
func procEveryTicks(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return max(int(d/rssEvery), 1)
}

// sample walks the tree once and appends a point.
func (t *procTree) sample() {
	var p cpuPoint
	p.T = time.Since(t.start)
	p.Ticks[cpuSelf] = statTicks(procStat(t.root), 11, 12)
	for _, pid := range descendants(t.root) {
		comm, ticks, ok := commTicks(procStat(pid))
		if !ok {
			continue
		}
		s := t.seen[pid]
		s.class = classOf(comm)
		s.ticks = max(s.ticks, ticks)
		t.seen[pid] = s
	}
	for _, s := range t.seen {
		p.Ticks[s.class] += s.ticks
	}
	if t.registry > 0 {
		p.Ticks[cpuRegistry] = statTicks(procStat(t.registry), 11, 12) - t.registry0
	}
	p.Ticks[cpuHarness] = selfTicks() - t.harness0
	if p.Ticks[cpuSelf] == 0 && len(t.series) > 0 { // gone: keep the last
		p.Ticks[cpuSelf] = t.series[len(t.series)-1].Ticks[cpuSelf]
	}
	t.series = append(t.series, p)
}

// finish appends the point at the command's exit: its own CPU from wait4
// (cpu), the registry's and hbbench's read again, its descendants' as last
// sampled.
func (t *procTree) finish(wall, cpu time.Duration) {
	var p cpuPoint
	if len(t.series) > 0 {
		p = t.series[len(t.series)-1]
	}
	p.T = wall
	p.Ticks[cpuSelf] = int64(cpu / clockTick)
	if t.registry > 0 {
		p.Ticks[cpuRegistry] = statTicks(procStat(t.registry), 11, 12) - t.registry0
	}
	p.Ticks[cpuHarness] = selfTicks() - t.harness0
	t.series = append(t.series, p)
}

func procStat(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/stat" }

// descendants are the children of pid, their children and so on, read
// from /proc/PID/task/TID/children (a child is listed under the thread
// that forked it).
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 && len(out) < 4096 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/children")
		for _, f := range tasks {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, s := range strings.Fields(string(data)) {
				if c, err := strconv.Atoi(s); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// commTicks reads a /proc/PID/stat: the command name and the process's
// own utime+stime in clock ticks.
func commTicks(stat string) (string, int64, bool) {
	data, err := os.ReadFile(stat)
	if err != nil {
		return "", 0, false
	}
	s := string(data)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", 0, false
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 13 {
		return "", 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return s[i+1 : j], u + k, true
}

func classOf(comm string) int {
	switch comm {
	case "go":
		return cpuGo
	case "compile":
		return cpuCompile
	case "link":
		return cpuLink
	}
	return cpuOther
}

// at is the point of the series at d after the start: the last one
// sampled at or before it (the zero point before the first).
func cpuAt(series []cpuPoint, d time.Duration) cpuPoint {
	var p cpuPoint
	for _, x := range series {
		if x.T > d {
			break
		}
		p = x
	}
	return p
}

// cpuBetween is each class's CPU between two moments of a run.
func cpuBetween(series []cpuPoint, from, to time.Duration) [cpuClasses]time.Duration {
	a, b := cpuAt(series, from), cpuAt(series, to)
	var out [cpuClasses]time.Duration
	for i := range out {
		out[i] = time.Duration(max(b.Ticks[i]-a.Ticks[i], 0)) * clockTick
	}
	return out
}
