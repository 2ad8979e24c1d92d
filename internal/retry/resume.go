package retry

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// resumable wraps the body of a complete GET response so that a body cut
// short is resumed with a range request (see the package documentation).
// used is how many retries the request already spent.
func (t *Transport) resumable(req *http.Request, resp *http.Response, used int) *http.Response {
	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		resp.ContentLength <= 0 || req.Header.Get("Range") != "" || t.opts.Retries == 0 {
		return resp
	}
	kind, value := validator(resp.Header)
	if kind == "" {
		return resp
	}
	resp.Body = &resumingBody{t: t, req: req, body: resp.Body, size: resp.ContentLength,
		validatorKind: kind, validator: value, used: used}
	return resp
}

// validator returns what names a response's content: Docker-Content-Digest,
// else a strong ETag.
func validator(h http.Header) (kind, value string) {
	if d := h.Get("Docker-Content-Digest"); d != "" {
		return "Docker-Content-Digest", d
	}
	if e := h.Get("ETag"); e != "" && !strings.HasPrefix(e, "W/") {
		return "ETag", e
	}
	return "", ""
}

// resumingBody delivers one response body, fetching the rest again when the
// connection breaks before Content-Length bytes.
type resumingBody struct {
	t                        *Transport
	req                      *http.Request
	body                     io.ReadCloser
	size, read               int64
	validatorKind, validator string
	used                     int
	err                      error // final: returned by every later Read
}

func (b *resumingBody) Read(p []byte) (int, error) {
	for {
		if b.err != nil {
			return 0, b.err
		}
		n, err := b.body.Read(p)
		b.read += int64(n)
		switch {
		case err == nil:
			return n, nil
		case err == io.EOF && b.read == b.size:
			return n, io.EOF
		case err == io.EOF:
			err = io.ErrUnexpectedEOF
		}
		if rerr := b.resume(err); rerr != nil {
			b.err = rerr
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (b *resumingBody) Close() error { return b.body.Close() }

// resume replaces the broken body with the rest of the content, or returns
// the error that ends this body.
func (b *resumingBody) resume(cause error) error {
	ctx := b.req.Context()
	reason, ok := errReason(cause)
	if !ok || ctx.Err() != nil {
		return cause
	}
	_ = b.body.Close()
	for {
		if b.used >= b.t.opts.Retries {
			b.t.stats.gaveUpOnce()
			return &Error{Reason: "body cut short: " + reason, Attempts: b.used + 1, req: b.req,
				Err: fmt.Errorf("body cut short after %d of %d bytes: %w", b.read, b.size, cause)}
		}
		b.used++
		wait := b.t.opts.backoff(b.used, nil)
		b.t.logRetry(b.req, fmt.Sprintf("body cut short after %d of %d bytes: %s", b.read, b.size, reason), b.used, wait)
		b.t.stats.retry(b.req.URL.Host, "body cut short: "+reason)
		if err := b.t.opts.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("waiting to resume a body cut short: %w", err)
		}
		r := b.req.Clone(ctx)
		r.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", b.read, b.size-1))
		resp, err := b.t.attempt(r)
		if err != nil {
			if reason, ok = errReason(err); !ok || ctx.Err() != nil {
				return err
			}
			cause = err
			continue
		}
		if transientStatus(resp.StatusCode) {
			discard(resp)
			reason = statusReason(resp.StatusCode)
			cause = fmt.Errorf("resuming at byte %d: %s", b.read, resp.Status)
			continue
		}
		body, err := b.accept(resp)
		if err != nil {
			discard(resp)
			return fmt.Errorf("body cut short after %d of %d bytes (%v), and it cannot be resumed: %w", b.read, b.size, cause, err)
		}
		b.body = body
		return nil
	}
}

// accept checks that resp continues the content at b.read and returns the
// body positioned there.
func (b *resumingBody) accept(resp *http.Response) (io.ReadCloser, error) {
	if _, v := validator(resp.Header); resp.Header.Get(b.validatorKind) != b.validator || v == "" {
		return nil, fmt.Errorf("the content changed (%s %q, was %q)", b.validatorKind, resp.Header.Get(b.validatorKind), b.validator)
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, end, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return nil, err
		}
		if start != b.read || end != b.size-1 || (total >= 0 && total != b.size) {
			return nil, fmt.Errorf("asked for bytes %d-%d/%d, got %d-%d/%d", b.read, b.size-1, b.size, start, end, total)
		}
		return resp.Body, nil
	case http.StatusOK:
		// The server ignored Range: skip what was already delivered.
		if resp.ContentLength != b.size {
			return nil, fmt.Errorf("full response of %d bytes, was %d", resp.ContentLength, b.size)
		}
		if _, err := io.CopyN(io.Discard, resp.Body, b.read); err != nil {
			return nil, fmt.Errorf("skipping %d bytes already read: %w", b.read, err)
		}
		return resp.Body, nil
	}
	return nil, fmt.Errorf("range request answered %s", resp.Status)
}

// parseContentRange reads "bytes START-END/TOTAL" (TOTAL may be "*": -1).
func parseContentRange(s string) (start, end, total int64, err error) {
	bad := fmt.Errorf("bad Content-Range %q", s)
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	a, z, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, 0, bad
	}
	if start, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, 0, bad
	}
	if end, err = strconv.ParseInt(z, 10, 64); err != nil {
		return 0, 0, 0, bad
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, 0, bad
		}
	}
	if start < 0 || end < start {
		return 0, 0, 0, bad
	}
	return start, end, total, nil
}
