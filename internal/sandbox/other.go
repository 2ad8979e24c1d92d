//go:build !linux

package sandbox

import "context"

// Init is never a sandbox's init outside Linux: it returns at once.
func Init(args []string) (code int, ok bool) { return 0, false }

// Run makes no sandbox outside Linux: an *UnavailableError, nothing run.
func (r *Runner) Run(ctx context.Context, s Spec) error {
	return &UnavailableError{Step: "create namespaces", Err: errNotLinux}
}

// Probe reports that --run cannot work outside Linux.
func (r *Runner) Probe(ctx context.Context, tmpDir string) error {
	return &UnavailableError{Step: "create namespaces", Err: errNotLinux}
}

// TotalLimits: outside Linux there is no run, and so no cgroup for one.
func (r *Runner) TotalLimits() (string, error) {
	return "", &NoTotalLimitError{V2: errNotLinux, V1: errNotLinux}
}
