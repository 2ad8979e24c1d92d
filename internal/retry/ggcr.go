package retry

import (
	"errors"
	"math"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// RemoteOptions returns the go-containerregistry options that make its own
// retries cooperate with t; pass them together with remote.WithTransport(t).
//
// go-containerregistry has two retry layers: a RoundTripper around the
// transport it is given (status codes and a predicate, for requests that are
// not part of an upload) and a retry around each whole blob upload and each
// manifest PUT (the same predicate). With these options:
//   - its RoundTripper retries nothing: no status codes, and the predicate
//     is false for every request t already retried;
//   - its whole-upload retry restarts a blob upload only when the failure was
//     a transient one on an upload data request (PATCH/PUT on
//     .../blobs/uploads/...), which t sends once; each restart is logged and
//     counted ("blob upload restarted: <reason>"). It is attempted Retries
//     times, waiting Base, then growing up to Max (its waits, unlike t's, do
//     not end early on cancellation; the upload then fails at once);
//   - a manifest PUT or any other request is retried by t alone.
//
// The predicate is also consulted once after go-containerregistry's last
// attempt, so the last "restarting blob upload" line may be followed by the
// error instead of a restart.
func (t *Transport) RemoteOptions() []remote.Option {
	return []remote.Option{
		remote.WithRetryStatusCodes(),
		remote.WithRetryPredicate(t.restartUpload),
		remote.WithRetryBackoff(t.uploadBackoff()),
	}
}

// uploadBackoff spreads Retries restarts from Base towards Max. Its Cap is
// left unset: go-containerregistry stops retrying once the cap is reached.
func (t *Transport) uploadBackoff() remote.Backoff {
	factor := 2.0
	if n := t.opts.Retries - 1; n > 0 && t.opts.Base > 0 {
		if f := math.Pow(float64(t.opts.Max)/float64(t.opts.Base), 1/float64(n)); f < factor {
			factor = max(f, 1)
		}
	}
	return remote.Backoff{Duration: t.opts.Base, Factor: factor, Jitter: 0.5, Steps: t.opts.Retries + 1}
}

// restartUpload is go-containerregistry's retry predicate: true only for a
// transient failure of an upload data request whose context is still live.
func (t *Transport) restartUpload(err error) bool {
	req, reason, ok := uploadFailure(err)
	if !ok || req.Context().Err() != nil {
		return false
	}
	t.opts.Logger.Info("restarting blob upload",
		"method", req.Method,
		"url", redact(req),
		"reason", reason,
		"restarts", t.opts.Retries)
	t.stats.retry(req.URL.Host, "blob upload restarted: "+reason)
	return true
}

func uploadFailure(err error) (*http.Request, string, bool) {
	if err == nil {
		return nil, "", false
	}
	var e *Error
	if errors.As(err, &e) && e.req != nil && isUploadData(e.req) {
		reason, ok := errReason(e.Err)
		return e.req, reason, ok
	}
	var terr *transport.Error
	if errors.As(err, &terr) && terr.Request != nil && isUploadData(terr.Request) && transientStatus(terr.StatusCode) {
		reason := statusReason(terr.StatusCode)
		if replayable(terr.Request, reason) {
			return nil, "", false // retried in place by the transport, its retries used up
		}
		return terr.Request, reason, true
	}
	return nil, "", false
}
