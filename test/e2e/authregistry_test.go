//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/test/faultproxy"
	"github.com/helperbuild/helperbuild/test/tokenauth"
)

// registryImpl is a CNCF distribution build the suite runs.
type registryImpl struct {
	Name string // for test names: "distribution-2.8"
	Bin  string // the program: serve CONFIG
}

// registryImpls are the registry implementations of the matrix: Debian's docker-registry
// (distribution 2.8) and distribution v3 built from its Go module
// (scripts/install-test-deps.sh installs it as distribution-v3).
var registryImpls = []registryImpl{
	{Name: "distribution-2.8", Bin: "docker-registry"},
	{Name: "distribution-v3", Bin: "distribution-v3"},
}

// Auth modes of an authRegistry.
const (
	authToken     = "token"     // auth: token, behind tokenauth's GitLab-like realm
	authBasic     = "basic"     // htpasswd
	authAnonymous = "anonymous" // none
)

// The project a CI job's token may push to, as GitLab scopes CI_JOB_TOKEN.
const jobProject = "e2e"

// authRegistry is a registry started for one test, plain HTTP on 127.0.0.1, with its
// clients sent through a faultproxy (which counts requests, the registry's 401s and the
// bytes it accepted, and can rate-limit). In token mode a tokenauth service issues the
// tokens; its log counts renewals.
type authRegistry struct {
	Impl   registryImpl
	Auth   string
	Host   string // the proxy, localhost:PORT: every client uses it
	Direct string // the registry's own localhost:PORT

	// Push and pull everywhere: pushes the base. In basic mode the htpasswd user.
	Admin, AdminPassword string
	// Token mode: a GitLab CI job (push to jobProject/..., pull elsewhere) and a
	// read-only deploy token of jobProject.
	JobToken                   string
	DeployUser, DeployPassword string

	Tokens *tokenauth.Service
	Proxy  *faultproxy.Proxy
	d      *daemon
}

// authRegistryOptions tune startAuthRegistry.
type authRegistryOptions struct {
	Lifetime time.Duration // token mode: token lifetime (default 2 s)
	// Uses: token mode: a token expires after this many requests (tokenauth's gate in
	// the proxy; default 8: every run meets expiry, a fresh token still serves a
	// client's concurrent retries).
	Uses  int
	Every int // > 0: the proxy answers every Every-th request 429 Retry-After: 1
}

// startAuthRegistry starts impl with auth for the rest of t and pushes the busybox base to
// base/busybox:1 (as the admin).
func (s *Suite) startAuthRegistry(t *testing.T, impl registryImpl, auth string, o authRegistryOptions) *authRegistry {
	t.Helper()
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	require.NoError(t, os.MkdirAll(storage, 0o755))
	r := &authRegistry{Impl: impl, Auth: auth}
	var authConfig string
	var gate func(http.ResponseWriter, *http.Request) bool
	switch auth {
	case authToken:
		if o.Lifetime == 0 {
			o.Lifetime = 2 * time.Second
		}
		r.Admin, r.AdminPassword = "e2e-admin", "admin-pw-"+randomHex(8)
		r.JobToken = "glcbt-" + randomHex(10)
		r.DeployUser, r.DeployPassword = "gitlab+deploy-token-7", "gldt-"+randomHex(10)
		tokens, err := tokenauth.New(tokenauth.Options{Lifetime: o.Lifetime, Users: []tokenauth.User{
			tokenauth.Admin(r.Admin, r.AdminPassword),
			tokenauth.CIJob(r.JobToken, jobProject),
			tokenauth.DeployToken(r.DeployUser, r.DeployPassword, jobProject),
		}})
		require.NoError(t, err)
		r.Tokens = tokens
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv := &http.Server{Handler: tokens.Handler(), ReadHeaderTimeout: time.Minute}
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(func() { _ = srv.Close() })
		bundle := filepath.Join(dir, "token-ca.pem")
		require.NoError(t, os.WriteFile(bundle, tokens.RootCertBundle(), 0o644))
		// localhost, not 127.0.0.1: go-containerregistry refuses a realm on a private IP
		// literal that is not the registry's own host:port.
		realm := "http://localhost:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/jwt/auth"
		authConfig = tokens.RegistryConfig(realm, bundle)
		if o.Uses == 0 {
			o.Uses = 8
		}
		if o.Uses > 0 {
			gate = tokens.ExpireAfter(o.Uses, realm)
		}
	case authBasic:
		r.Admin, r.AdminPassword = "e2e-user", "e2e-pw-"+randomHex(8)
		out, err := exec.Command("htpasswd", "-Bbn", r.Admin, r.AdminPassword).Output()
		require.NoError(t, err, "htpasswd")
		htpasswd := filepath.Join(dir, "htpasswd")
		require.NoError(t, os.WriteFile(htpasswd, out, 0o600))
		authConfig = fmt.Sprintf("auth:\n  htpasswd:\n    realm: helperbuild-e2e\n    path: %s\n", htpasswd)
	case authAnonymous:
	default:
		t.Fatalf("auth mode %q", auth)
	}

	var lastErr error
	for range 3 { // a free port can be taken between asking and binding
		port, err := freePort()
		require.NoError(t, err)
		r.Direct = "localhost:" + strconv.Itoa(port)
		config := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:%d
  secret: %s
%s`, storage, port, randomHex(16), authConfig)
		configFile := filepath.Join(dir, "config.yml")
		require.NoError(t, os.WriteFile(configFile, []byte(config), 0o600))
		r.d, err = startDaemon("registry "+impl.Name+" "+auth, filepath.Join(dir, "registry.log"), os.Environ(), impl.Bin, "serve", configFile)
		require.NoError(t, err)
		if lastErr = r.waitReady(); lastErr == nil {
			break
		}
		_ = r.d.stop(5 * time.Second)
	}
	require.NoError(t, lastErr, "start %s with %s auth", impl.Name, auth)
	t.Cleanup(func() { _ = r.d.stop(10 * time.Second) })

	// The gate and the rate limit are armed once the base is in: skopeo (containers/image)
	// neither renews a token that expires in the middle of an upload nor waits out a 429.
	var armed atomic.Bool
	intercept := func(w http.ResponseWriter, req *http.Request) bool {
		return gate != nil && armed.Load() && gate(w, req)
	}
	proxy, err := faultproxy.Start(faultproxy.Options{Target: "http://" + strings.Replace(r.Direct, "localhost", "127.0.0.1", 1),
		Every: o.Every, Faults: []faultproxy.Fault{faultproxy.TooMany}, Intercept: intercept,
		Match: func(*http.Request) bool { return armed.Load() }})
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	r.Proxy = proxy
	r.Host = strings.Replace(proxy.Addr(), "127.0.0.1", "localhost", 1)

	args := []string{"skopeo", "copy", "--all", "--quiet", "--preserve-digests", "--dest-tls-verify=false"}
	if r.Admin != "" {
		args = append(args, "--dest-creds", r.Admin+":"+r.AdminPassword)
	}
	sh(t, append(args, s.base.ociRef(), "docker://"+r.ref(baseRepo+":"+baseTag))...)
	armed.Store(true)
	return r
}

// waitReady polls GET /v2/ on the registry itself: 200 without auth, else 401 with the
// challenge of the mode.
func (r *authRegistry) waitReady() error {
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	return r.d.pollUntil(200, 50*time.Millisecond, func() (bool, error) {
		resp, err := client.Get("http://" + r.Direct + "/v2/")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		challenge := resp.Header.Get("WWW-Authenticate")
		switch r.Auth {
		case authAnonymous:
			return resp.StatusCode == http.StatusOK, fmt.Errorf("GET /v2/: %d", resp.StatusCode)
		case authToken:
			return resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(challenge, "Bearer realm="),
				fmt.Errorf("GET /v2/: %d %q, want 401 Bearer", resp.StatusCode, challenge)
		}
		return resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(challenge, "Basic"),
			fmt.Errorf("GET /v2/: %d %q, want 401 Basic", resp.StatusCode, challenge)
	})
}

// ref is repoAndTag in this registry, through the proxy.
func (r *authRegistry) ref(repoAndTag string) string { return r.Host + "/" + repoAndTag }

// ciEnv are the variables a GitLab CI job pushing here has: the job token in token mode,
// the htpasswd user in basic mode, nothing anonymous.
func (r *authRegistry) ciEnv() []string {
	switch r.Auth {
	case authToken:
		return []string{"CI_REGISTRY=" + r.Host, "CI_REGISTRY_USER=" + tokenauth.CIJobUser,
			"CI_REGISTRY_PASSWORD=" + r.JobToken, "CI_JOB_TOKEN=" + r.JobToken}
	case authBasic:
		return []string{"CI_REGISTRY=" + r.Host, "CI_REGISTRY_USER=" + r.Admin, "CI_REGISTRY_PASSWORD=" + r.AdminPassword}
	}
	return nil
}

// secrets are every password and token of the registry, and the start of the JWTs
// its token service signs ({"alg":"ES256","typ":"JWT","x5c":..., base64url).
func (r *authRegistry) secrets() []string {
	var out []string
	for _, s := range []string{r.AdminPassword, r.JobToken, r.DeployPassword} {
		if s != "" {
			out = append(out, s)
		}
	}
	if r.Auth == authToken {
		out = append(out, "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIs")
	}
	return out
}

// counts is what the proxy and the token service saw, for a report row.
type counts struct {
	Requests, Unauthorized, TooMany int // Unauthorized: the registry's 401s
	Uploaded                        int64
	Expired, Issued, Renewed        int // token mode: the gate's 401s, tokens
}

func (r *authRegistry) counts() counts {
	st := r.Proxy.Stats()
	c := counts{Requests: st.Requests, Unauthorized: st.Statuses[http.StatusUnauthorized],
		TooMany: st.Faults[faultproxy.TooMany], Uploaded: st.Uploaded}
	if r.Tokens != nil {
		ts := r.Tokens.Stats()
		c.Expired, c.Issued, c.Renewed = ts.Expired, ts.Issued, ts.Renewed
	}
	return c
}

// minus is c - before.
func (c counts) minus(before counts) counts {
	return counts{Requests: c.Requests - before.Requests, Unauthorized: c.Unauthorized - before.Unauthorized,
		TooMany: c.TooMany - before.TooMany, Uploaded: c.Uploaded - before.Uploaded,
		Expired: c.Expired - before.Expired, Issued: c.Issued - before.Issued, Renewed: c.Renewed - before.Renewed}
}

func (c counts) String() string {
	return fmt.Sprintf("%d requests, %d 401s from the registry + %d for expired tokens, %d 429s, %d tokens issued (%d renewals after expiry), %d bytes uploaded",
		c.Requests, c.Unauthorized, c.Expired, c.TooMany, c.Issued, c.Renewed, c.Uploaded)
}
