package retry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff is the wait before retry n (1-based): full jitter over an
// exponentially growing, capped window; when Retry-After asks for longer
// (capped at MaxRetryAfter), what it asks plus that jitter. Without the
// jitter on top, every client told "1" by the same burst of 429s comes
// back in the same instant, and the same client can be the one refused
// again each time (a fan-out's jobs starting together did, in
// TestRateLimitedFanOut).
func (o Options) backoff(n int, resp *http.Response) time.Duration {
	window := o.Max
	if n <= 62 {
		if w := o.Base << (n - 1); w > 0 && w < o.Max {
			window = w
		}
	}
	r := o.Rand()
	if r < 0 || r >= 1 {
		r = 0
	}
	wait := time.Duration(r * float64(window))
	if after, ok := retryAfter(resp, o.Now()); ok {
		if after = min(after, o.MaxRetryAfter); after > wait {
			wait = after + wait
		}
	}
	return wait
}

// maxRetryAfter bounds what a header can ask before MaxRetryAfter applies,
// so the arithmetic cannot overflow.
const maxRetryAfter = 24 * time.Hour

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}
