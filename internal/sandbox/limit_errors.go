package sandbox

import "fmt"

// NoTotalLimitError says why a run's memory and processes are bounded per
// process only (the rlimits), not in total.
type NoTotalLimitError struct{ V2, V1 error }

func (e *NoTotalLimitError) Error() string {
	return fmt.Sprintf("no cgroup for the run's total memory and processes (cgroup v2: %v; cgroup v1: %v), so only per-process limits apply", e.V2, e.V1)
}

// MemoryLimitError is a run during which the kernel killed processes
// because the run's processes together reached Limits.Memory; Err is how
// the program itself ended (nil when it exited 0 nevertheless).
type MemoryLimitError struct {
	Limit  uint64
	Killed int
	Peak   uint64 // the most the run used together, 0 when unknown
	Err    error
}

func (e *MemoryLimitError) Error() string {
	msg := fmt.Sprintf("the run reached its total memory limit of %d MiB: the kernel killed %d of its processes", e.Limit>>20, e.Killed)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

func (e *MemoryLimitError) Unwrap() error { return e.Err }
