package sign

import (
	"fmt"
	"io"
	"net/http"
)

// failUnavailable turns a 429 or 5xx that is left after the retries into
// an error naming the service: sigstore-go's Fulcio client, given such an
// answer and no retries of its own, reads the body it has closed and
// reports only that.
type failUnavailable struct{ next http.RoundTripper }

func (t failUnavailable) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || (resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests) {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return nil, fmt.Errorf("%s answered %s: %s", req.URL.Host, resp.Status, body)
}
