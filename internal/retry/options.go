package retry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Options configures a Transport. Start from DefaultOptions: the zero value
// of Retries means "no retries" and zero durations mean "no wait".
type Options struct {
	// Retries is how many times a failed request is retried after its first
	// attempt (0: never retried). Negative is an error. Default 5.
	Retries int
	// Timeout abandons an attempt that makes no progress for this long
	// (connecting, sending, waiting for headers, reading the body); 0: none.
	Timeout time.Duration
	// Base and Max shape the backoff: retry n waits a random duration in
	// [0, min(Max, Base·2ⁿ⁻¹)). Defaults 200ms and 10s.
	Base, Max time.Duration
	// MaxRetryAfter caps the wait a Retry-After header asks for; 0 means Max.
	// Default 1m.
	MaxRetryAfter time.Duration
	// Logger receives one INFO record per retry, the detail a verbose run
	// shows (Stats sums them up per host); nil discards.
	Logger *slog.Logger
	// Rand returns a number in [0, 1) for the jitter; nil: math/rand/v2.
	Rand func() float64
	// Sleep waits d or until ctx is done, returning ctx's cause then; nil:
	// a timer. Tests inject one that records durations without sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for Retry-After dates; nil: time.Now.
	Now func() time.Time

	// afterFunc starts an attempt's stall timer (see Timeout); nil:
	// time.AfterFunc. The package's tests fire it by hand.
	afterFunc func(d time.Duration, f func()) stallTimer
}

// stallTimer is the part of *time.Timer an attempt's watchdog uses.
type stallTimer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// DefaultOptions returns 5 retries, 200ms base, 10s cap, Retry-After capped
// at 1 minute, no per-attempt timeout.
func DefaultOptions() Options {
	return Options{Retries: 5, Base: 200 * time.Millisecond, Max: 10 * time.Second, MaxRetryAfter: time.Minute}
}

func (o Options) validate() (Options, error) {
	switch {
	case o.Retries < 0:
		return o, fmt.Errorf("retries must be 0 or more, got %d", o.Retries)
	case o.Timeout < 0:
		return o, fmt.Errorf("timeout must be 0 (none) or more, got %s", o.Timeout)
	case o.Base < 0 || o.Max < 0 || o.MaxRetryAfter < 0:
		return o, errors.New("backoff durations must not be negative")
	case o.Max < o.Base:
		return o, fmt.Errorf("backoff cap %s is below its base %s", o.Max, o.Base)
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = o.Max
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.afterFunc == nil {
		o.afterFunc = func(d time.Duration, f func()) stallTimer { return time.AfterFunc(d, f) }
	}
	return o, nil
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
