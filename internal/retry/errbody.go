package retry

import (
	"bytes"
	"io"
	"net/http"
)

// maxErrorBody bounds the error response body read whole (a registry's is
// a short JSON list of errors).
const maxErrorBody = 64 << 10

// readErrorBody reads the body of a final error response (404, 401, ...)
// whole before handing it on, so that a body cut short is a transient
// failure of the request, retried like a reset connection, rather than an
// "unexpected EOF" the caller reports instead of the status. A body longer
// than maxErrorBody is handed on as it is, its first part read already.
func readErrorBody(resp *http.Response) (*http.Response, error) {
	if resp.StatusCode < http.StatusBadRequest || resp.Body == nil || resp.Body == http.NoBody {
		return resp, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	if err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	if len(b) > maxErrorBody {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
		return resp, nil
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}
