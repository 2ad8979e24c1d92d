package testkit

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Clock is a clock a test moves by hand.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now reads c.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves c on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Tokens is a Registry wrap that speaks the distribution token protocol as
// GitLab's container registry does: a registry request without a valid
// bearer token gets 401 with `WWW-Authenticate: Bearer realm=…/token,
// service=…,scope=repository:NAME:pull,push`; GET /token with HTTP basic
// credentials User:Password answers a JWT-shaped token (its exp claim
// set, not signed) that expires Lifetime after it was issued on Clock.
// Each registry request moves Clock on by Step after its token was
// checked, so with Step ≥ Lifetime every token is good for one request:
// every request after the first meets an expired token.
type Tokens struct {
	User, Password string
	Lifetime, Step time.Duration
	Clock          *Clock

	mu      sync.Mutex
	expires map[string]time.Time
	issued  int
	refused int
}

// Issued is how many tokens the realm gave out; Refused how many registry
// requests were answered 401.
func (tk *Tokens) Issued() (issued, refused int) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return tk.issued, tk.refused
}

// Wrap puts the token realm at /token and the token check in front of next.
func (tk *Tokens) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			tk.issue(w, r)
			return
		}
		ok := tk.valid(r.Header.Get("Authorization"))
		tk.Clock.Advance(tk.Step)
		if !ok {
			tk.mu.Lock()
			tk.refused++
			tk.mu.Unlock()
			scope := ""
			if name, _, found := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/blobs/"); found {
				scope = fmt.Sprintf(`,scope="repository:%s:pull,push"`, name)
			} else if name, _, found := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/"); found {
				scope = fmt.Sprintf(`,scope="repository:%s:pull,push"`, name)
			}
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="testkit"%s`, r.Host, scope))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (tk *Tokens) valid(authorization string) bool {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		return false
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	exp, ok := tk.expires[tok]
	return ok && tk.Clock.Now().Before(exp)
}

func (tk *Tokens) issue(w http.ResponseWriter, r *http.Request) {
	if u, p, ok := r.BasicAuth(); !ok || u != tk.User || p != tk.Password {
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}`, http.StatusUnauthorized)
		return
	}
	now := tk.Clock.Now()
	tk.mu.Lock()
	tk.issued++
	n := tk.issued
	exp := now.Add(tk.Lifetime)
	enc := base64.RawURLEncoding.EncodeToString
	tok := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		enc(fmt.Appendf(nil, `{"exp":%d,"iat":%d,"jti":"%d"}`, exp.Unix(), now.Unix(), n)) + ".x"
	if tk.expires == nil {
		tk.expires = map[string]time.Time{}
	}
	tk.expires[tok] = exp
	tk.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token": tok, "expires_in": int(tk.Lifetime.Seconds()), "issued_at": now.UTC().Format(time.RFC3339),
	})
}
