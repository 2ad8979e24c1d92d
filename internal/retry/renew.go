package retry

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// An auth layer above this transport (go-containerregistry's bearer
// transport) answers a 401 by fetching a new token and sending the same
// *http.Request again. Its body was read by the first send, so that second
// send would go out empty ("ContentLength=N with Body length 0"), or, for a
// streamed blob chunk, with whatever the first send left unread. A Transport
// remembers each request it answered 401 and, when the request comes again,
// sends a fresh copy of its body (req.GetBody); a body that cannot be read
// again fails with errBodySpent, which RemoteOptions' upload predicate
// answers by restarting the whole blob upload.
//
// So that a blob is not sent twice because a token ran out, a blob upload's
// data request whose bearer token (a JWT) expires within renewMargin is
// preceded by a GET of the upload's status with the same credentials: if
// the registry refuses the token, that 401 is the answer to the data
// request, whose body is still unread, and the auth layer sends it again
// with a new token.

// renewMargin is how close to its expiry a token must be for a data request
// to be preceded by a check: clock skew between this machine and the
// token's issuer, plus the time to send the request's headers.
const renewMargin = 30 * time.Second

// errBodySpent is a request sent again after a 401 whose body was already
// read by its first send and cannot be read again.
var errBodySpent = errors.New("the registry asked for new credentials after this request's body was sent, and the body cannot be read again")

// bodyState is what became of the body of a request answered 401.
type bodyState int

const (
	bodySent   bodyState = iota // the first send read it (or may have)
	bodyUnsent                  // a token check answered; the body was never read
)

// challenged remembers the requests a Transport answered 401, until they
// come again.
type challenged struct {
	mu   sync.Mutex
	reqs map[*http.Request]bodyState
}

func (c *challenged) put(req *http.Request, s bodyState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reqs == nil {
		c.reqs = map[*http.Request]bodyState{}
	}
	c.reqs[req] = s
}

// take reports whether req was answered 401 before, and what became of its
// body, forgetting it.
func (c *challenged) take(req *http.Request) (bodyState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.reqs[req]
	delete(c.reqs, req)
	return s, ok
}

// hasBody reports whether req carries a body.
func hasBody(req *http.Request) bool {
	return req.Body != nil && req.Body != http.NoBody
}

// again prepares a request that comes back after a 401: a copy with a fresh
// body, the request itself when its body was never read, or errBodySpent.
// renewed reports that it came back (its token was just renewed).
func (t *Transport) again(req *http.Request) (r *http.Request, renewed bool, err error) {
	state, ok := t.challenges.take(req)
	if !ok || !hasBody(req) || state == bodyUnsent {
		return req, ok, nil
	}
	if req.GetBody == nil {
		return nil, true, &Error{Reason: reasonBodySpent, Attempts: 1, Err: errBodySpent, req: req}
	}
	if r, err = rewind(req); err != nil {
		return nil, true, err
	}
	t.stats.resentOnce()
	return r, true, nil
}

// answered notes a response to req that an auth layer may answer by sending
// req again.
func (t *Transport) answered(req *http.Request, resp *http.Response, state bodyState) {
	if resp == nil || resp.StatusCode != http.StatusUnauthorized {
		return
	}
	t.stats.challengedOnce()
	if hasBody(req) {
		t.challenges.put(req, state)
	}
}

// checkToken asks, before a blob upload's data request whose token is about
// to expire, whether the registry still takes the token: a 401 answer is
// returned (the data request is then not sent), anything else is nil.
func (t *Transport) checkToken(req *http.Request) *http.Response {
	if !isUploadData(req) || !hasBody(req) {
		return nil
	}
	exp, ok := tokenExpiry(req.Header.Get("Authorization"))
	if !ok || exp.Sub(t.opts.Now()) > renewMargin {
		return nil
	}
	t.stats.checkedOnce()
	// The same request without its body, as a GET of the upload's status
	// (the distribution spec's "get upload status").
	check := req.Clone(req.Context())
	check.Method, check.Body, check.GetBody, check.ContentLength = http.MethodGet, nil, nil, 0
	check.Header = http.Header{}
	for _, h := range []string{"Authorization", "User-Agent"} {
		if v := req.Header.Get(h); v != "" {
			check.Header.Set(h, v)
		}
	}
	resp, err := t.attempt(check)
	if err != nil {
		return nil // the data request will meet whatever this was
	}
	if resp.StatusCode != http.StatusUnauthorized {
		discard(resp)
		return nil
	}
	resp.Request = req
	return resp
}

// tokenExpiry reads the expiry of a bearer token that is a JWT, without
// checking its signature: it only decides whether to ask first.
func tokenExpiry(authorization string) (time.Time, bool) {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		return time.Time{}, false
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	sec, err := claims.Exp.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(sec), 0), true
}
