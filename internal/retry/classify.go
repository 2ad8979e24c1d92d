package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
)

// transientStatus lists the statuses worth another try.
func transientStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// reasonBodySpent names a blob upload sent again after a 401 once its data
// was read: go-containerregistry restarts the upload with the new token.
const reasonBodySpent = "credentials renewed after the data was sent"

func statusReason(code int) string { return "status " + strconv.Itoa(code) }

// errTimeout marks an attempt this transport abandoned for lack of progress.
var errTimeout = errors.New("no progress within the per-attempt timeout")

// errReason names a transient network failure, or returns false for an error
// not worth retrying (including the caller's own cancellation).
func errReason(err error) (string, bool) {
	switch {
	case err == nil:
		return "", false
	case errors.Is(err, errTimeout):
		return "timeout", true
	case errors.Is(err, errBodySpent):
		return reasonBodySpent, true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "", false
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe", true
	case errors.Is(err, net.ErrClosed):
		// A request body still being written when the server reset the
		// connection: "write tcp ...: use of closed network connection".
		return "connection closed", true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "unexpected EOF", true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout", true
	}
	// net/http reports a connection closed before the response without a
	// wrapped sentinel in some paths.
	if msg := err.Error(); strings.Contains(msg, "server closed idle connection") ||
		strings.Contains(msg, "connection reset by peer") {
		return "connection reset", true
	}
	return "", false
}

// isUploadData reports whether req carries or commits blob data of an upload
// session, which is never replayed here (see the package documentation).
func isUploadData(req *http.Request) bool {
	return (req.Method == http.MethodPatch || req.Method == http.MethodPut) &&
		strings.Contains(req.URL.Path, "/blobs/uploads/")
}

// replayable reports whether req may be sent again after a failure for
// reason. An upload data request is, only after a 429: a rate limit turns
// a request away before the registry reads it, so the session took none of
// it (restarting the whole upload instead can fall in step with a limiter
// that refuses every nth request, and never get through).
func replayable(req *http.Request, reason string) bool {
	if !hasBody(req) || req.GetBody != nil {
		return !isUploadData(req) || reason == statusReason(http.StatusTooManyRequests)
	}
	return false
}

// redact returns u without user info, query string or fragment: upload
// locations and token endpoints carry state and credentials in the query.
func redact(req *http.Request) string {
	u := req.URL
	if u == nil {
		return ""
	}
	s := u.EscapedPath()
	if u.Host != "" {
		s = u.Scheme + "://" + u.Host + s
	}
	return s
}
