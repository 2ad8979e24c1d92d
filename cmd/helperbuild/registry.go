package main

import (
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// retryFlags are the flags of every command that talks to registries.
type retryFlags struct {
	retries int
	timeout time.Duration
}

func (f *retryFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&f.retries, "retries", 5, "retry a transient registry failure (connection reset, timeout, 408, 429, 5xx) up to this many times, with exponential backoff; 0: never")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "abandon and retry a registry request that makes no progress for this long; 0: never")
}

func (f *retryFlags) validate() error {
	if f.retries < 0 {
		return usagef("--retries must be 0 or more, got %d", f.retries)
	}
	if f.timeout < 0 {
		return usagef("--timeout must be 0 (none) or more, got %s", f.timeout)
	}
	return nil
}

// withRetries makes o's registry traffic retry transient failures. The
// retrying transport wraps o's per-host transport (so --insecure-registry
// keeps working) and tells go-containerregistry to leave retries to it.
func withRetries(o imageref.Options, f retryFlags, log *slog.Logger) (imageref.Options, *retry.Transport, error) {
	ro := retry.DefaultOptions()
	ro.Retries, ro.Timeout, ro.Logger = f.retries, f.timeout, log
	// Below the retries, so the bytes of each attempt are counted as they go out.
	rt, err := retry.New(progress.CountingTransport(o.HTTPTransport()), ro)
	if err != nil {
		return o, nil, usageError{err}
	}
	o.Transport = rt
	o.Remote = append(o.Remote, rt.RemoteOptions()...)
	return o, rt, nil
}

// reportRetries sums up the retries of a run, if there were any.
func reportRetries(log *slog.Logger, rt *retry.Transport) {
	if s := rt.Stats(); s.Total() > 0 {
		log.Warn("registry retries", "summary", s.String())
	}
}
