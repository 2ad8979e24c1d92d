package retry

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// Transport retries transient failures of the requests it sends through the
// next RoundTripper; see the package documentation for what it retries.
type Transport struct {
	next       http.RoundTripper
	opts       Options
	stats      counters
	challenges challenged // requests answered 401, until they come again
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport sending through next (http.DefaultTransport when
// nil). Invalid options (negative retries, a cap below the base) are errors.
func New(next http.RoundTripper, opts Options) (*Transport, error) {
	o, err := opts.validate()
	if err != nil {
		return nil, fmt.Errorf("retry options: %w", err)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &Transport{next: next, opts: o}, nil
}

// Stats returns a snapshot of the retries made so far.
func (t *Transport) Stats() Stats { return t.stats.snapshot() }

// Error is a request that failed transiently and was not, or no longer,
// retried. It unwraps to the last failure.
type Error struct {
	// Reason names the last failure: "connection reset", "timeout", ...
	Reason string
	// Attempts is how many times the request was sent.
	Attempts int
	Err      error
	req      *http.Request // for RemoteOptions' upload predicate
}

func (e *Error) Error() string {
	if e.Attempts <= 1 {
		return e.Err.Error()
	}
	return fmt.Sprintf("gave up after %d attempts (last: %s): %v", e.Attempts, e.Reason, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// RoundTrip sends req, retrying transient failures.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	t.stats.sent(req.URL.Host)
	areq, renewed, err := t.again(req)
	if err != nil {
		return nil, err
	}
	if !renewed {
		if resp := t.checkToken(areq); resp != nil {
			t.answered(req, resp, bodyUnsent)
			return resp, nil
		}
	}
	for n := 0; ; n++ {
		if n > 0 {
			var err error
			if areq, err = rewind(req); err != nil {
				return nil, fmt.Errorf("re-reading the request body for a retry: %w", err)
			}
		}
		resp, err := t.attempt(areq)
		if err == nil && !transientStatus(resp.StatusCode) {
			resp, err = readErrorBody(resp)
		}
		reason, transient := "", false
		switch {
		case err != nil:
			reason, transient = errReason(err)
		case transientStatus(resp.StatusCode):
			reason, transient = statusReason(resp.StatusCode), true
		}
		if ctx.Err() != nil {
			transient = false
		}
		if !transient {
			if err != nil {
				if n > 0 {
					return nil, &Error{Reason: "not retryable", Attempts: n + 1, Err: err, req: req}
				}
				return nil, err
			}
			t.answered(req, resp, bodySent)
			return t.resumable(req, resp, n), nil
		}
		replay := replayable(req, reason)
		if !replay || n >= t.opts.Retries {
			if replay {
				t.stats.gaveUpOnce()
			}
			if err != nil {
				return nil, &Error{Reason: reason, Attempts: n + 1, Err: err, req: req}
			}
			return resp, nil
		}
		wait := t.opts.backoff(n+1, resp)
		if resp != nil {
			discard(resp)
		}
		t.logRetry(req, reason, n+1, wait)
		t.stats.retry(req.URL.Host, reason)
		t.stats.waited(wait)
		if err := t.opts.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("waiting to retry after %s: %w", reason, err)
		}
	}
}

func (t *Transport) logRetry(req *http.Request, reason string, n int, wait time.Duration) {
	t.opts.Logger.Info("retrying request",
		"method", req.Method,
		"url", redact(req),
		"reason", reason,
		"attempt", fmt.Sprintf("%d/%d", n, t.opts.Retries),
		"wait", wait.Round(time.Millisecond).String())
}

// rewind returns a copy of req with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

// discard drains a little of a response we will not use, so its connection
// can be reused, and closes it.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	_ = resp.Body.Close()
}
