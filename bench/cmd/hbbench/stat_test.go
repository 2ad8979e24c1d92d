package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStatTicks reads the process's own and its children's clock ticks
// from a /proc/PID/stat line whose command name holds a space and a ')'.
func TestStatTicks(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
	line := "4242 (docker registry) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 17 5 300 40 20 0 12 0 99 0 0\n"
	path := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := statTicks(path, 11, 12); got != 22 {
		t.Errorf("own utime+stime = %d, want 22", got)
	}
	if got := childTicks(path); got != 340 {
		t.Errorf("children's cutime+cstime = %d, want 340", got)
	}
	if got := statTicks(filepath.Join(t.TempDir(), "gone"), 11, 12); got != 0 {
		t.Errorf("a process that is gone = %d, want 0", got)
	}
}
