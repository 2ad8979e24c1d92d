package registry

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// Retries is how a run retries transient registry failures.
type Retries struct {
	// Retries is the most retries of one request; 0 never retries.
	Retries int
	// Timeout abandons (and retries) a request that makes no progress for
	// this long; 0 never does.
	Timeout time.Duration
}

// Check says what is wrong with r, naming the flags that set it.
func (r Retries) Check() error {
	if r.Retries < 0 {
		return fmt.Errorf("--retries must be 0 or more, got %d", r.Retries)
	}
	if r.Timeout < 0 {
		return fmt.Errorf("--timeout must be 0 (none) or more, got %s", r.Timeout)
	}
	return nil
}

// WithRetries makes o's registry traffic retry transient failures. The
// retrying transport wraps o's per-host transport (so insecure hosts keep
// working), counts the bytes of each attempt as they go out (for
// progress), and tells go-containerregistry to leave retries to it; log
// gets one warning per retry.
func WithRetries(o imageref.Options, r Retries, log *slog.Logger) (imageref.Options, *retry.Transport, error) {
	ro := retry.DefaultOptions()
	ro.Retries, ro.Timeout, ro.Logger = r.Retries, r.Timeout, log
	// Below the retries, so the bytes of each attempt are counted as they go out.
	rt, err := retry.New(progress.CountingTransport(o.HTTPTransport()), ro)
	if err != nil {
		return o, nil, err
	}
	o.Transport = rt
	o.Remote = append(o.Remote, rt.RemoteOptions()...)
	return o, rt, nil
}

// ReportRetries sums up the retries of a run on log, if there were any.
func ReportRetries(log *slog.Logger, rt *retry.Transport) {
	if s := rt.Stats(); s.Total() > 0 {
		log.Warn("registry retries", "summary", s.String())
	}
}
