package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Tracker records every sandbox a Runner starts (use Started as
// Runner.Started) and finds what is left of them.
type Tracker struct {
	mu      sync.Mutex
	started []started
}

type started struct {
	pid   int
	pidNS string // the target of /proc/PID/ns/pid
	// hold keeps the PID namespace, so that its number (the kernel gives a
	// freed one to the next namespace made) stays its own: on a machine
	// where others make sandboxes too, another's would otherwise look like
	// one of these.
	hold *os.File
}

// Started records a sandbox's first process, which is still in its setup
// (waiting for its configuration) when Runner calls this.
func (t *Tracker) Started(pid int) {
	p := fmt.Sprintf("/proc/%d/ns/pid", pid)
	hold, _ := os.Open(p)
	ns, err := os.Readlink(p)
	if err != nil {
		ns = "unknown: " + err.Error()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = append(t.started, started{pid: pid, pidNS: ns, hold: hold})
}

// Count is how many sandboxes were started.
func (t *Tracker) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.started)
}

// Leftovers lists every process still alive that belongs to a recorded
// sandbox: its PID namespace, or the process group or session of its first
// process. Empty means nothing outlived its run.
func (t *Tracker) Leftovers() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ns, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		pgrp, sid := groupAndSession(string(stat))
		for _, s := range t.started {
			if ns == s.pidNS || pgrp == s.pid || sid == s.pid {
				out = append(out, fmt.Sprintf("pid %d (pgrp %d, session %d, %s) of the sandbox started as %d", pid, pgrp, sid, ns, s.pid))
			}
		}
	}
	return out
}

// groupAndSession reads the process group and session from /proc/PID/stat
// (fields 5 and 6, after the parenthesised command name).
func groupAndSession(stat string) (pgrp, sid int) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return -1, -1
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 4 {
		return -1, -1
	}
	pgrp, _ = strconv.Atoi(f[2])
	sid, _ = strconv.Atoi(f[3])
	return pgrp, sid
}
