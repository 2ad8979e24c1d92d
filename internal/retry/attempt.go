package retry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// timeoutError is an attempt abandoned after Timeout without progress.
type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string {
	return fmt.Sprintf("no progress for %s (per-attempt timeout)", e.d)
}
func (timeoutError) Is(target error) bool { return target == errTimeout }
func (timeoutError) Timeout() bool        { return true }

// attempt sends req once. With a Timeout, the attempt runs under a context
// cancelled when no progress is made for that long; progress is every read
// of the request body or of the response body, and the arrival of headers.
// The returned response's Request is req, whose context is the caller's.
func (t *Transport) attempt(req *http.Request) (*http.Response, error) {
	if t.opts.Timeout <= 0 {
		resp, err := t.next.RoundTrip(req)
		if resp != nil {
			resp.Request = req
		}
		return resp, err
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watchdog{d: t.opts.Timeout, cancel: cancel}
	w.timer = t.opts.afterFunc(w.d, func() { cancel(timeoutError{w.d}) })

	areq := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		areq.Body = &watchedBody{ReadCloser: req.Body, w: w}
	}
	if req.GetBody != nil {
		areq.GetBody = func() (io.ReadCloser, error) {
			b, err := req.GetBody()
			if err != nil || b == nil || b == http.NoBody {
				return b, err
			}
			return &watchedBody{ReadCloser: b, w: w}, nil
		}
	}
	resp, err := t.next.RoundTrip(areq)
	if err != nil {
		w.stop()
		if c := context.Cause(ctx); c != nil && req.Context().Err() == nil {
			if te, ok := c.(timeoutError); ok {
				return nil, te
			}
		}
		return nil, err
	}
	w.touch()
	resp.Request = req
	resp.Body = &watchedBody{ReadCloser: resp.Body, w: w, ctx: ctx, closeStops: true}
	return resp, nil
}

// watchdog cancels an attempt after d without progress.
type watchdog struct {
	d      time.Duration
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  stallTimer
	done   bool
}

func (w *watchdog) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.timer.Reset(w.d)
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.done = true
		w.timer.Stop()
		w.cancel(nil)
	}
}

// watchedBody reports progress to its watchdog and, for a response body,
// turns the watchdog's cancellation into a timeout error.
type watchedBody struct {
	io.ReadCloser
	w          *watchdog
	ctx        context.Context // response bodies only
	closeStops bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.touch()
	}
	if err != nil && err != io.EOF && b.ctx != nil {
		if te, ok := context.Cause(b.ctx).(timeoutError); ok {
			err = te
		}
	}
	if err == io.EOF && b.closeStops {
		b.w.stop()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	if b.closeStops {
		b.w.stop()
	}
	return err
}
