package registry

import (
	"context"
	"io"
	"net/http"
)

type counterKey struct{}

// WithCounter returns ctx carrying count: a request made with it on the
// transport stack of WithRetries calls count with the size of every chunk
// of its body as it is sent (a release's progress of uploaded bytes).
func WithCounter(ctx context.Context, count func(n int64)) context.Context {
	return context.WithValue(ctx, counterKey{}, count)
}

// CarryCounter returns ctx carrying the counter of from, if any: for a
// hook that must run on a longer-lived context than the one it was given.
func CarryCounter(ctx, from context.Context) context.Context {
	if c, ok := from.Value(counterKey{}).(func(int64)); ok {
		return WithCounter(ctx, c)
	}
	return ctx
}

// countingTransport wraps rt so that the body of a request whose context
// carries a counter (WithCounter) is counted as rt reads it: the bytes are
// counted on their way out, not read again. A retried request is counted
// again (the bytes did go out twice).
type countingTransport struct{ rt http.RoundTripper }

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	count, ok := req.Context().Value(counterKey{}).(func(int64))
	if !ok || req.Body == nil || req.Body == http.NoBody {
		return t.rt.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Body = &countingBody{ReadCloser: req.Body, count: count}
	return t.rt.RoundTrip(r)
}

type countingBody struct {
	io.ReadCloser
	count func(int64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.count(int64(n))
	}
	return n, err
}
