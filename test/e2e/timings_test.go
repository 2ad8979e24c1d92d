//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// timings collects how long each phase of the run took (set-up steps, test steps,
// teardown) and prints them as a table when the run ends.
type timings struct {
	mu   sync.Mutex
	rows []timing
}

type timing struct {
	name   string
	took   time.Duration
	failed bool
}

// add records one finished phase.
func (tm *timings) add(name string, took time.Duration, failed bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.rows = append(tm.rows, timing{name, took, failed})
}

// measure runs fn as the phase name, records its duration and logs it with logf.
func (tm *timings) measure(name string, logf func(string, ...any), fn func() error) error {
	start := time.Now()
	err := fn()
	took := time.Since(start)
	tm.add(name, took, err != nil)
	if err != nil {
		logf("phase %-40s %8s  FAILED: %v", name, took.Round(time.Millisecond), err)
	} else {
		logf("phase %-40s %8s", name, took.Round(time.Millisecond))
	}
	return err
}

// print writes the table of all phases, in the order they finished, to w; total is the
// wall-clock time of the whole run.
func (tm *timings) print(w io.Writer, total time.Duration) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	fmt.Fprintln(w, "\n=== phase timings")
	for _, r := range tm.rows {
		status := ""
		if r.failed {
			status = "  FAILED"
		}
		fmt.Fprintf(w, "%10s  %s%s\n", r.took.Round(time.Millisecond), r.name, status)
	}
	fmt.Fprintf(w, "%10s  total (wall clock)\n", total.Round(time.Millisecond))
}
