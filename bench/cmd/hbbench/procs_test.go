package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestProcTreeSeesGrandchildren runs a shell whose child burns CPU and
// checks that the sampled tree counts it as another child's, not the
// command's own, and that the series ends at the exit.
func TestProcTreeSeesGrandchildren(t *testing.T) {
	log, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	burn := `sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; sleep 0.1`
	s, err := run(context.Background(), proc{Dir: t.TempDir(), Args: []string{"sh", "-c", burn}, Log: log, Timeout: time.Minute, RSS: true, ProcEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Series) < 2 {
		t.Fatalf("series of %d points, want several", len(s.Series))
	}
	if last := s.Series[len(s.Series)-1]; last.T != s.Wall {
		t.Errorf("last point at %s, want the exit at %s", last.T, s.Wall)
	}
	whole := cpuBetween(s.Series, -1, s.Wall)
	if whole[cpuOther] < 5*clockTick {
		t.Errorf("the child shell's CPU = %s, want most of the run's (%s of children by wait4)", whole[cpuOther], s.ChildCPU)
	}
	if whole[cpuOther] > s.ChildCPU+clockTick {
		t.Errorf("sampled children %s > wait4's %s", whole[cpuOther], s.ChildCPU)
	}
}

func TestCPUBetweenAndClasses(t *testing.T) {
	series := []cpuPoint{{T: 10 * time.Millisecond}, {T: 30 * time.Millisecond}, {T: 50 * time.Millisecond}}
	series[1].Ticks[cpuLink] = 3
	series[2].Ticks[cpuLink] = 7
	if got := cpuBetween(series, 20*time.Millisecond, 60*time.Millisecond)[cpuLink]; got != 7*clockTick {
		t.Errorf("link from 20 ms (point at 10 ms) to 60 ms = %s, want 70ms", got)
	}
	if got := cpuBetween(series, 30*time.Millisecond, 49*time.Millisecond)[cpuLink]; got != 0 {
		t.Errorf("between two points read at the same one = %s, want 0", got)
	}
	for comm, want := range map[string]int{"go": cpuGo, "compile": cpuCompile, "link": cpuLink, "asm": cpuOther} {
		if got := classOf(comm); got != want {
			t.Errorf("classOf(%q) = %d, want %d", comm, got, want)
		}
	}
}
