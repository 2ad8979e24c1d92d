// Package retry is an http.RoundTripper that retries transient registry
// failures, so one dropped connection or one 503 does not fail a release.
//
// Promise: a request that fails transiently — connection reset, refused or
// closed early (EOF), a timeout, or status 408, 429, 500, 502, 503 or 504 — is
// retried up to Options.Retries times, waiting a full-jitter exponential
// backoff (a random duration in [0, min(Max, Base·2ⁿ⁻¹)) before retry n), or,
// when the response's Retry-After (seconds or an HTTP date, capped at
// MaxRetryAfter) asks for longer, what it asks plus that random duration, so
// clients refused together do not return together. Every other response, 401, 403, 404 and 400 included, is
// returned at once. Each retry is logged once, at warning level, naming the
// method, the URL without user info or query string, the reason, the attempt
// as n/N and the wait; Stats counts retries by reason. Cancelling the
// request's context ends a wait at once.
//
// Which requests are replayed: a request without a body, or whose body can be
// re-read (req.GetBody), except the data requests of a blob upload session
// (PATCH or PUT on .../blobs/uploads/...) after any failure but a 429 (a rate
// limit turns a request away before the registry reads it; restarting the
// upload instead can fall in step with a limiter that refuses every nth
// request). Otherwise those are sent once: a session that
// received part of a blob cannot take the whole blob again (go-containerregistry's
// registry answers "stream uploads after first write are not allowed"; a
// registry that appends would store a corrupt blob), and a commit whose
// response was lost cannot be repeated (the session is gone). Instead the
// whole upload is restarted — HEAD,
// new session, PATCH, PUT — by go-containerregistry's own upload retry, which
// RemoteOptions configures to act on exactly these failures and nothing else.
// So every failure is retried by one layer only: this transport for single
// requests, go-containerregistry for blob uploads; retries never multiply.
//
// A request sent again after a 401 (go-containerregistry's bearer transport
// renews its token and sends the same *http.Request once more) goes out
// with a fresh copy of its body (req.GetBody); one whose body cannot be read
// again fails instead of going out short, and a blob upload is then
// restarted as above. Before a blob's data whose bearer token (a JWT)
// expires within 30 seconds, the upload is asked for with that token
// first: a 401 there answers the data request, its body unsent, so a token
// that runs out does not send a blob twice (renew.go).
//
// A download cut short — a GET whose 200 response body ends or breaks before
// its Content-Length — is resumed: the transport asks again for the missing
// bytes (Range: bytes=N-END) and continues the same body, when the response
// names its content (Docker-Content-Digest or a strong ETag) and the new
// response names the same. It counts against the same retry budget. Without
// that, go-containerregistry would only report the short read (its digest
// check fails) and never fetch again.
//
// Timeout is a stall timeout per attempt: an attempt is abandoned (and retried
// as "timeout") when no progress is made for that long — while connecting,
// sending the request body, waiting for the response headers, or between two
// reads of the response body. A large upload or download on a slow link is
// therefore not cut off as long as bytes keep moving.
package retry
