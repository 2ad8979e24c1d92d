package tokenauth

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// issued is what the service remembers of a token it signed: whose, for
// which scopes, and how often an ExpireAfter gate let it through.
type issued struct {
	user   string
	scopes []string
	uses   int
}

// repoPath finds the repository of a distribution API path.
var repoPath = regexp.MustCompile(`^/v2/(.+?)/(?:blobs|manifests|tags|referrers)/`)

// ExpireAfter returns a gate for a proxy in front of the registry
// (faultproxy's Intercept): a request whose bearer token has already been
// let through uses times is answered 401 with the registry's challenge
// (realm, service, the request's scope, error="invalid_token"), as a
// registry answers a token past its lifetime, so the client must fetch a
// new one. Counting uses instead of seconds makes every run meet expiry,
// on a busy machine or an idle one, without timing anything; a fresh
// token serves uses requests, enough for the client's concurrent retries.
// A token this service did not issue, and a request without one, pass.
func (s *Service) ExpireAfter(uses int, realm string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return false
		}
		s.mu.Lock()
		tok := s.tokens[sha256.Sum256([]byte(raw))]
		expired := tok != nil && tok.uses >= uses
		if tok != nil && !expired {
			tok.uses++
		}
		if expired {
			s.log = append(s.log, Event{Time: s.opts.Now(), User: tok.user, Status: http.StatusUnauthorized, Scopes: tok.scopes, Expired: true})
		}
		s.mu.Unlock()
		if !expired {
			return false
		}
		challenge := fmt.Sprintf("Bearer realm=%q,service=%q", realm, s.opts.Service)
		if m := repoPath.FindStringSubmatch(r.URL.Path); m != nil {
			actions := "pull"
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				actions = "pull,push"
			}
			challenge += fmt.Sprintf(",scope=%q", "repository:"+m[1]+":"+actions)
		}
		w.Header().Set("WWW-Authenticate", challenge+`,error="invalid_token"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprintln(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":"token expired"}]}`)
		return true
	}
}
