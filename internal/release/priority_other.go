//go:build !linux

package release

// lowPriority runs fn. Only Linux can lower one thread's priority.
func lowPriority(fn func() error) error { return fn() }
