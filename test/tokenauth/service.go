package tokenauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configures a Service.
type Options struct {
	// Issuer is the tokens' iss, the registry's auth.token.issuer; "" means
	// "tokenauth-test".
	Issuer string
	// Service is the tokens' aud, the registry's auth.token.service; ""
	// means "container_registry", GitLab's.
	Service string
	// Lifetime is how long a token is accepted; 0 means GitLab's default,
	// five minutes.
	Lifetime time.Duration
	// Leeway is what the registry adds to a token's expiry (distribution
	// 2.7 and later: 60 s); exp is written that much earlier. 0 means 60 s;
	// negative means none.
	Leeway time.Duration
	// Users are the accounts the realm accepts; a request without
	// credentials gets a token with Anonymous's grants, or none.
	Users     []User
	Anonymous func(repo string) []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Event is one answer of the realm. It never holds a password or token.
type Event struct {
	Time    time.Time
	User    string   // "" for anonymous
	Status  int      // 200, or 401 for unknown credentials
	Scopes  []string // as requested: "repository:group/app:pull,push"
	Granted []string // as granted, same form; empty actions are left out
	Expires time.Time
	// Expired marks an answer of an ExpireAfter gate: a request refused
	// because its token (User's, for Scopes) had expired.
	Expired bool
}

// Stats sums the log.
type Stats struct {
	Issued int // tokens issued (200s)
	// Renewed counts tokens issued because one had expired (see Stats):
	// a client that met the expiry.
	Renewed int
	// Reissued counts tokens issued for a user and scope set whose last
	// token was still valid (a client that did not keep its token).
	Reissued int
	Refused  int // the realm's 401s: unknown user or wrong password
	Expired  int // requests an ExpireAfter gate refused
}

// Service is a running token service; serve Handler at the realm's URL.
type Service struct {
	opts   Options
	signer *signer

	mu     sync.Mutex
	log    []Event
	tokens map[[32]byte]*issued // by the token's SHA-256
}

// New makes a Service with a fresh test CA.
func New(opts Options) (*Service, error) {
	if opts.Issuer == "" {
		opts.Issuer = "tokenauth-test"
	}
	if opts.Service == "" {
		opts.Service = "container_registry"
	}
	if opts.Lifetime == 0 {
		opts.Lifetime = 5 * time.Minute
	}
	if opts.Lifetime < time.Second {
		return nil, fmt.Errorf("token lifetime %s: want at least a second (JWT times are in seconds)", opts.Lifetime)
	}
	switch {
	case opts.Leeway == 0:
		opts.Leeway = 60 * time.Second
	case opts.Leeway < 0:
		opts.Leeway = 0
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	seen := map[string]bool{}
	for _, u := range opts.Users {
		if u.Name == "" || u.Password == "" || u.Grant == nil {
			return nil, fmt.Errorf("user %q: want a name, a password and a Grant", u.Name)
		}
		if seen[u.Name+"\x00"+u.Password] {
			return nil, fmt.Errorf("user %q: listed twice with the same password", u.Name)
		}
		seen[u.Name+"\x00"+u.Password] = true
	}
	s, err := newSigner(opts.Now())
	if err != nil {
		return nil, err
	}
	return &Service{opts: opts, signer: s, tokens: map[[32]byte]*issued{}}, nil
}

// RootCertBundle is the PEM of the test CA: the registry's
// auth.token.rootcertbundle.
func (s *Service) RootCertBundle() []byte { return s.signer.caPEM }

// RegistryConfig is the auth section of a distribution config.yml (2.8 or
// v3) for a realm at realmURL and the CA bundle written to bundlePath.
func (s *Service) RegistryConfig(realmURL, bundlePath string) string {
	return fmt.Sprintf("auth:\n  token:\n    realm: %s\n    service: %s\n    issuer: %s\n    rootcertbundle: %s\n",
		realmURL, s.opts.Service, s.opts.Issuer, bundlePath)
}

// Log returns every answer so far, in order.
func (s *Service) Log() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Stats sums Log. A token issued to a user after a gate refused one of the
// user's tokens as expired is a renewal (one per refusal), as is one issued
// for a user and scope set whose last token had outlived its lifetime.
func (s *Service) Stats() Stats {
	var st Stats
	last := map[string]time.Time{} // user and scopes -> expiry of the last token
	pending := map[string]int{}    // user -> refusals not yet followed by a new token
	for _, e := range s.Log() {
		key := e.User + "\x00" + strings.Join(e.Scopes, " ")
		switch {
		case e.Expired:
			st.Expired++
			pending[e.User]++
			continue
		case e.Status != http.StatusOK:
			st.Refused++
			continue
		}
		st.Issued++
		exp, had := last[key]
		switch {
		case pending[e.User] > 0:
			pending[e.User]--
			st.Renewed++
		case had && !e.Time.Before(exp):
			st.Renewed++
		case had:
			st.Reissued++
		}
		last[key] = e.Expires
	}
	return st
}

// tokenResponse is what the realm answers, Docker's token spec and GitLab's
// fields.
type tokenResponse struct {
	Token       string `json:"token"`
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	IssuedAt    string `json:"issued_at"`
}

// Handler serves the realm: GET /jwt/auth?service=...&scope=...
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwt/auth", s.serveToken)
	return mux
}

func (s *Service) serveToken(w http.ResponseWriter, r *http.Request) {
	now := s.opts.Now()
	scopes := requestedScopes(r)
	if svc := r.URL.Query().Get("service"); svc != "" && svc != s.opts.Service {
		http.Error(w, fmt.Sprintf("service %q: this realm issues tokens for %q", svc, s.opts.Service), http.StatusBadRequest)
		return
	}
	grant, user, err := s.authenticate(r)
	if err != nil {
		s.record(Event{Time: now, User: user, Status: http.StatusUnauthorized, Scopes: scopes})
		w.Header().Set("WWW-Authenticate", `Basic realm="GitLab"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"HTTP Basic: Access denied"}]}`, http.StatusUnauthorized)
		return
	}
	access := grantScopes(scopes, grant)
	jti := make([]byte, 8)
	_, _ = rand.Read(jti)
	exp := now.Add(s.opts.Lifetime)
	token, err := s.signer.sign(claims{
		Issuer:     s.opts.Issuer,
		Subject:    user,
		Audience:   s.opts.Service,
		Expiration: exp.Add(-s.opts.Leeway).Unix(),
		NotBefore:  now.Unix(),
		IssuedAt:   now.Unix(),
		JWTID:      hex.EncodeToString(jti),
		Access:     access,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	granted := make([]string, 0, len(access))
	for _, a := range access {
		granted = append(granted, a.Type+":"+a.Name+":"+strings.Join(a.Actions, ","))
	}
	s.mu.Lock()
	s.tokens[sha256.Sum256([]byte(token))] = &issued{user: user, scopes: scopes}
	s.mu.Unlock()
	s.record(Event{Time: now, User: user, Status: http.StatusOK, Scopes: scopes, Granted: granted, Expires: exp})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(tokenResponse{Token: token, AccessToken: token,
		ExpiresIn: int(s.opts.Lifetime / time.Second), IssuedAt: now.UTC().Format(time.RFC3339)})
}

func (s *Service) record(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, e)
}

var errDenied = errors.New("unknown user or wrong password")

// authenticate returns the grants of r's Basic credentials (anonymous's
// without any) and the user name.
func (s *Service) authenticate(r *http.Request) (func(string) []string, string, error) {
	name, password, ok := r.BasicAuth()
	if !ok {
		if s.opts.Anonymous != nil {
			return s.opts.Anonymous, "", nil
		}
		return func(string) []string { return nil }, "", nil
	}
	for _, u := range s.opts.Users {
		if u.Name == name && u.Password == password {
			return u.Grant, name, nil
		}
	}
	return nil, name, errDenied
}

// requestedScopes are r's scope parameters, each split at spaces (clients
// send several parameters or one with spaces).
func requestedScopes(r *http.Request) []string {
	var out []string
	for _, v := range r.URL.Query()["scope"] {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

// grantScopes answers each repository scope with the requested actions the
// user has, as GitLab does: what is not granted is left out, not refused.
func grantScopes(scopes []string, grant func(string) []string) []resourceActions {
	out := []resourceActions{}
	for _, sc := range scopes {
		typ, rest, ok := strings.Cut(sc, ":")
		i := strings.LastIndex(rest, ":")
		if !ok || i < 0 || typ != "repository" {
			continue // registry:catalog:* and malformed scopes get nothing
		}
		name, wanted := rest[:i], strings.Split(rest[i+1:], ",")
		has := grant(name)
		var actions []string
		for _, a := range wanted {
			if a == "*" {
				actions = append(actions, has...)
			} else if slices.Contains(has, a) {
				actions = append(actions, a)
			}
		}
		slices.Sort(actions)
		actions = slices.Compact(actions)
		if len(actions) > 0 {
			out = append(out, resourceActions{Type: "repository", Name: name, Actions: actions})
		}
	}
	return out
}
