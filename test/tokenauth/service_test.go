package tokenauth

import (
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

const (
	jobToken    = "job-token-1234567890"
	deployPass  = "deploy-pass-abcdef"
	adminPass   = "admin-pass-xyz"
	projectRepo = "group/project"
)

func newTestService(t *testing.T, c *clock, lifetime time.Duration) (*Service, *httptest.Server) {
	t.Helper()
	s, err := New(Options{
		Lifetime: lifetime,
		Now:      c.now,
		Users: []User{
			Admin("root", adminPass),
			CIJob(jobToken, projectRepo),
			DeployToken("gitlab+deploy-token-1", deployPass, projectRepo),
		},
	})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv
}

// fetch asks the realm for scopes as user (anonymous when user is "").
func fetch(t *testing.T, srv *httptest.Server, user, password string, scopes ...string) (int, tokenResponse) {
	t.Helper()
	q := url.Values{"service": {"container_registry"}, "scope": scopes}
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/jwt/auth?"+q.Encode(), nil)
	require.NoError(t, err)
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var tr tokenResponse
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&tr))
	}
	return resp.StatusCode, tr
}

// verify checks raw as distribution v3 does (go-jose, x5c chained to the
// rootcertbundle) and returns its claims.
func verify(t *testing.T, s *Service, raw string) claims {
	t.Helper()
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	require.NoError(t, err)
	var unverified claims
	require.NoError(t, tok.UnsafeClaimsWithoutVerification(&unverified))
	cl0 := unverified.IssuedAt // the certificates are valid at the service's clock
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(s.RootCertBundle()))
	chains, err := tok.Headers[0].Certificates(x509.VerifyOptions{Roots: roots, CurrentTime: time.Unix(cl0, 0), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	require.NoError(t, err, "x5c must chain to the rootcertbundle")
	var c claims
	require.NoError(t, tok.Claims(chains[0][0].PublicKey, &c), "signature")
	return c
}

func TestTokensVerifyAgainstTheBundle(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, srv := newTestService(t, c, 2*time.Second)
	code, tr := fetch(t, srv, CIJobUser, jobToken, "repository:"+projectRepo+":pull,push")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, tr.Token, tr.AccessToken)
	require.Equal(t, 2, tr.ExpiresIn)
	cl := verify(t, s, tr.Token)
	require.Equal(t, "tokenauth-test", cl.Issuer)
	require.Equal(t, "container_registry", cl.Audience)
	require.Equal(t, CIJobUser, cl.Subject)
	require.Equal(t, c.t.Unix(), cl.IssuedAt)
	// The registry accepts a token until exp + 60 s: exp is written so that
	// this is the configured lifetime.
	require.Equal(t, c.t.Add(2*time.Second-60*time.Second).Unix(), cl.Expiration)
	require.Equal(t, []resourceActions{{Type: "repository", Name: projectRepo, Actions: []string{Pull, Push}}}, cl.Access)

	// Another CA does not verify it.
	other, err := New(Options{})
	require.NoError(t, err)
	tok, err := jwt.ParseSigned(tr.Token, []jose.SignatureAlgorithm{jose.ES256})
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(other.RootCertBundle())
	_, err = tok.Headers[0].Certificates(x509.VerifyOptions{Roots: roots, CurrentTime: c.t})
	require.ErrorContains(t, err, "unknown authority")
	require.Error(t, err)
}

func TestGrantsPerUser(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, srv := newTestService(t, c, time.Minute)
	tests := []struct {
		name, user, password, scope string
		want                        []string // actions granted; nil: none
	}{
		{"job on its project", CIJobUser, jobToken, "repository:group/project:pull,push", []string{Pull, Push}},
		{"job below its project", CIJobUser, jobToken, "repository:group/project/helper:push,pull", []string{Pull, Push}},
		{"job elsewhere: pull only", CIJobUser, jobToken, "repository:other/base:pull,push", []string{Pull}},
		{"job: a prefix is not its project", CIJobUser, jobToken, "repository:group/project2:push", nil},
		{"job never deletes", CIJobUser, jobToken, "repository:group/project:delete", nil},
		{"deploy token reads", "gitlab+deploy-token-1", deployPass, "repository:group/project:pull,push", []string{Pull}},
		{"deploy token elsewhere", "gitlab+deploy-token-1", deployPass, "repository:other/base:pull", nil},
		{"admin wildcard", "root", adminPass, "repository:any/repo:*", []string{Delete, Pull, Push}},
		{"anonymous", "", "", "repository:group/project:pull", nil},
		{"catalog is never granted", "root", adminPass, "registry:catalog:*", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, tr := fetch(t, srv, tc.user, tc.password, tc.scope)
			require.Equal(t, http.StatusOK, code)
			cl := verify(t, s, tr.Token)
			if tc.want == nil {
				require.Empty(t, cl.Access)
				return
			}
			require.Len(t, cl.Access, 1)
			require.Equal(t, tc.want, cl.Access[0].Actions)
		})
	}
	// Two scopes in one request (a mount: push on the target, pull on the source).
	code, tr := fetch(t, srv, CIJobUser, jobToken, "repository:group/project:pull,push", "repository:other/base:pull")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, verify(t, s, tr.Token).Access, 2)
}

func TestWrongCredentialsAre401AndLogged(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, srv := newTestService(t, c, time.Minute)
	code, _ := fetch(t, srv, CIJobUser, "not-the-job-token", "repository:group/project:pull")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = fetch(t, srv, "nobody", adminPass, "repository:group/project:pull")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, Stats{Refused: 2}, s.Stats())
	for _, e := range s.Log() {
		require.NotContains(t, strings.Join(append(e.Scopes, e.User), " "), adminPass)
	}
}

func TestStatsTellRenewalsFromReissues(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, srv := newTestService(t, c, 2*time.Second)
	scope := "repository:group/project:pull,push"
	fetch(t, srv, CIJobUser, jobToken, scope) // first
	c.t = c.t.Add(time.Second)
	fetch(t, srv, CIJobUser, jobToken, scope) // the first still valid: reissued
	c.t = c.t.Add(2 * time.Second)
	fetch(t, srv, CIJobUser, jobToken, scope)                           // the second expired: renewed
	fetch(t, srv, CIJobUser, jobToken, "repository:group/project:pull") // another scope set: first
	require.Equal(t, Stats{Issued: 4, Renewed: 1, Reissued: 1}, s.Stats())
	log := s.Log()
	require.Len(t, log, 4)
	require.Equal(t, []string{scope}, log[0].Scopes)
	require.Equal(t, []string{"repository:group/project:pull,push"}, log[0].Granted)
	require.Equal(t, c.t.Add(2*time.Second), log[3].Expires)
}

func TestOptionsAreChecked(t *testing.T) {
	_, err := New(Options{Lifetime: 500 * time.Millisecond})
	require.ErrorContains(t, err, "at least a second")
	_, err = New(Options{Users: []User{{Name: "x"}}})
	require.ErrorContains(t, err, `user "x"`)
	s, err := New(Options{})
	require.NoError(t, err)
	cfg := s.RegistryConfig("http://localhost:1/jwt/auth", "/tmp/ca.pem")
	require.Contains(t, cfg, "service: container_registry")
	require.Contains(t, cfg, "rootcertbundle: /tmp/ca.pem")
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/jwt/auth?service=other")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestExpireAfterUses: a token passes the gate uses times, then every
// request with it is answered 401 with the registry's challenge and scope;
// the next token the user fetches counts as a renewal.
func TestExpireAfterUses(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, srv := newTestService(t, c, time.Minute)
	gate := s.ExpireAfter(2, srv.URL+"/jwt/auth")
	ask := func(method, path, token string) (bool, *httptest.ResponseRecorder) {
		req := httptest.NewRequest(method, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		return gate(w, req), w
	}
	_, tr := fetch(t, srv, CIJobUser, jobToken, "repository:group/project:pull,push")
	for range 2 {
		answered, _ := ask(http.MethodHead, "/v2/group/project/blobs/sha256:abc", tr.Token)
		require.False(t, answered, "a fresh token passes")
	}
	answered, w := ask(http.MethodPatch, "/v2/group/project/blobs/uploads/xyz", tr.Token)
	require.True(t, answered, "the third use is refused")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, `Bearer realm="`+srv.URL+`/jwt/auth",service="container_registry",scope="repository:group/project:pull,push",error="invalid_token"`,
		w.Header().Get("WWW-Authenticate"))
	answered, _ = ask(http.MethodGet, "/v2/", "not-a-token-of-ours")
	require.False(t, answered, "a foreign token passes")
	answered, _ = ask(http.MethodGet, "/v2/", "")
	require.False(t, answered, "no token passes")

	_, tr2 := fetch(t, srv, CIJobUser, jobToken, "repository:group/project:pull,push")
	answered, _ = ask(http.MethodGet, "/v2/group/project/manifests/v1", tr2.Token)
	require.False(t, answered, "the renewed token passes")
	require.Equal(t, Stats{Issued: 2, Renewed: 1, Expired: 1}, s.Stats())
}
