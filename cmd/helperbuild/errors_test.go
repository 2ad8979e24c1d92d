package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/test/faultproxy"
)

// errorLineOf is the last stderr line; only progress lines come before it.
func errorLineOf(t *testing.T, res relResult) string {
	t.Helper()
	lines := relLines(res.stderr)
	require.NotEmpty(t, lines)
	for _, l := range lines[:len(lines)-1] {
		assert.False(t, strings.HasPrefix(l, "helperbuild: "), "only progress before the error: %q", l)
	}
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "helperbuild: "), last)
	assert.False(t, strings.HasSuffix(last, "|"), "no trailing | of a joined dump: %q", last)
	assert.NotContains(t, last, "map[", "no Go map")
	return last
}

// TestUntrustedCertificate: a registry whose certificate no CA vouches for
// gets one line naming the host, SSL_CERT_FILE and --insecure-registry,
// not the https-then-http attempts; --insecure-registry then works.
func TestUntrustedCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")

	res := relRun(t, t.Context(), relEnv(t), "verify", host+"/g/x:1")
	assert.Equal(t, 1, res.code)
	assert.Equal(t, "helperbuild: "+host+"/g/x:1: the certificate of "+host+" is signed by an unknown authority: trust its CA with SSL_CERT_FILE=ca.pem or the system CA store (update-ca-certificates), or pass --insecure-registry "+host, errorLineOf(t, res))
	assert.NotContains(t, res.stderr, "http://")

	dir := relModule(t)
	t.Chdir(dir)
	res = relRun(t, t.Context(), relEnv(t), "push", "--platforms", "linux/amd64", "--base", "scratch", "--tag", host+"/g/app:v1", "./cmd/app")
	assert.Equal(t, 1, res.code)
	assert.Equal(t, "helperbuild: the certificate of "+host+" is signed by an unknown authority: trust its CA with SSL_CERT_FILE=ca.pem or the system CA store (update-ca-certificates), or pass --insecure-registry "+host, errorLineOf(t, res))

	res = relRun(t, t.Context(), relEnv(t), "push", "--insecure-registry", host, "--platforms", "linux/amd64", "--base", "scratch", "--tag", host+"/g/app:v1", "./cmd/app")
	assert.Equal(t, 0, res.code, res.stderr)
}

// TestUnreachableRegistry: a closed port is one line naming the host,
// after the retries.
func TestUnreachableRegistry(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	host := l.Addr().String()
	require.NoError(t, l.Close())

	res := relRun(t, t.Context(), relEnv(t), "verify", "--retries", "1", host+"/g/x:1")
	assert.Equal(t, 1, res.code)
	assert.Equal(t, "helperbuild: "+host+"/g/x:1: cannot reach registry "+host+": connection refused (gave up after 2 attempts); check the address and that the registry is up", errorLineOf(t, res))
	assert.Contains(t, res.stderr, `level=WARN msg="registry retries, every request to the host together" host=`+host+` retries=2 last="connection refused"`, "the retries (--retries 1 for the ping over HTTPS, then HTTP) came first, on one line")
	assert.NotContains(t, res.stderr, `msg="retrying request"`, "each retry only with -v")
}

// TestWrongCredentials: the line says which credentials went to the host:
// CI_REGISTRY_USER only for CI_REGISTRY's host, the Docker config, or none.
func TestWrongCredentials(t *testing.T) {
	host := relRegistry(t, "ci-user", "right-password")
	dockerConfig := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("ci-user:docker-wrong"))
	cfg, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dockerConfig, "config.json"), cfg, 0o600))
	emptyConfig := t.TempDir()

	const refused = "authentication failed for %s (UNAUTHORIZED: authentication required); "
	for _, tt := range []struct {
		name         string
		dockerConfig string
		env          []string
		want         string
	}{
		{"CI_REGISTRY is the host", emptyConfig, []string{"CI_REGISTRY=" + host, "CI_REGISTRY_USER=ci-user", "CI_REGISTRY_PASSWORD=ci-wrong"},
			"helperbuild sent CI_REGISTRY_USER and CI_REGISTRY_PASSWORD (they are for CI_REGISTRY=" + host + "): check them"},
		{"CI_REGISTRY is another host", emptyConfig, []string{"CI_REGISTRY=registry.gitlab.example", "CI_REGISTRY_USER=ci-user", "CI_REGISTRY_PASSWORD=ci-wrong"},
			"helperbuild found no credentials for " + host + " in the Docker config in DOCKER_CONFIG=" + emptyConfig + " and sent none: log in with docker login " + host +
				"; CI_REGISTRY_USER applies only to CI_REGISTRY's host (CI_REGISTRY is registry.gitlab.example), not to " + host},
		{"Docker config", dockerConfig, nil,
			"helperbuild sent the credentials for " + host + " from the Docker config in DOCKER_CONFIG=" + dockerConfig + ": log in again with docker login " + host},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DOCKER_CONFIG", tt.dockerConfig) // go-containerregistry's keychain reads the process's
			res := relRun(t, t.Context(), relEnv(t, append(tt.env, "DOCKER_CONFIG="+tt.dockerConfig)...), "verify", host+"/g/x:1")
			assert.Equal(t, 1, res.code)
			line := errorLineOf(t, res)
			assert.Equal(t, "helperbuild: "+host+"/g/x:1: "+strings.Replace(refused, "%s", host, 1)+tt.want, line)
			assert.NotContains(t, line, "wrong")
		})
	}
}

// TestBaseWithoutThePlatform: the error also points at the per-platform
// base override.
func TestBaseWithoutThePlatform(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	host := relRegistry(t, "", "")
	relPushIndex(t, host+"/g/base:1", relAmd64Index(t), "", "")
	res := relRun(t, t.Context(), relEnv(t), "build", "--platforms", "linux/arm64", "--base", host+"/g/base:1", "./cmd/app")
	assert.Equal(t, 1, res.code)
	assert.Equal(t, "helperbuild: image app: base "+host+"/g/base:1 has no linux/arm64 (it offers: linux/amd64): drop the platform, use a base that has it, or give linux/arm64 a base of its own with base: {linux/arm64: REF} under the image in helperbuild.yaml", errorLineOf(t, res))
}

// TestInvalidTemplatedTag: a version that makes an invalid tag names the
// character and the replace function.
func TestInvalidTemplatedTag(t *testing.T) {
	dir := relModule(t)
	relWrite(t, dir, map[string]string{"helperbuild.yaml": strings.Replace(recipeYAML, "tags: [v1]", `tags: ["{{.Version}}"]`, 1), "Dockerfile": okDockerfile})
	t.Chdir(dir)
	res := relRun(t, t.Context(), relEnv(t), "build", "--version", "v17.10.0+fancy.1")
	assert.Equal(t, 2, res.code)
	assert.Equal(t, `helperbuild: helperbuild.yaml:9: image app: images[0].tags[0] renders tag "v17.10.0+fancy.1": '+' (character 9) is not allowed in a tag, only A-Z a-z 0-9 _ . -; use the replace template function: {{.Version | replace "+" "-"}}`, errorLineOf(t, res))
}

// stateRegistry is a registry whose upload locations carry session state
// in the query, as the distribution registry's do (_state=...).
func stateRegistry(t *testing.T) string {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg.ServeHTTP(stateWriter{w}, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

type stateWriter struct{ http.ResponseWriter }

func (s stateWriter) WriteHeader(code int) {
	if loc := s.Header().Get("Location"); strings.Contains(loc, "/blobs/uploads/") && !strings.Contains(loc, "?") {
		s.Header().Set("Location", loc+"?_state=SESSIONSECRET")
	}
	s.ResponseWriter.WriteHeader(code)
}

// TestInterruptedRun: an interrupted push says what it tagged, never the
// request it was in (upload locations carry session state).
func TestInterruptedRun(t *testing.T) {
	isUpload := func(r *http.Request) bool {
		return (r.Method == http.MethodPatch || r.Method == http.MethodPut) && strings.Contains(r.URL.Path, "/blobs/uploads/")
	}
	isTag := func(tag string) func(r *http.Request) bool {
		return func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/"+tag)
		}
	}
	for _, tt := range []struct {
		name  string
		when  func(r *http.Request) bool
		want  string
		state bool // the interrupted request's URL held _state
	}{
		{name: "during an upload", when: isUpload, want: "interrupted: nothing was tagged", state: true},
		// latest's PUT is held by the proxy when the run is interrupted: the
		// registry may or may not store it, helperbuild cannot know.
		{name: "between two tags", when: isTag("latest"), want: "interrupted: tagged {host}/g/app:v1; may have been written: {host}/g/app:latest; run again to write the rest"},
		{name: "at the first tag", when: isTag("v1"), want: "interrupted: no tag written for sure; may have been written: {host}/g/app:v1; not tagged: {host}/g/app:latest; run again to write the rest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := relModule(t)
			t.Chdir(dir)
			reg := stateRegistry(t)
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			var once sync.Once
			var sawState bool
			p := relProxy(t, faultproxy.Options{Target: "http://" + reg, Persistent: true,
				Faults: []faultproxy.Fault{faultproxy.Slow}, Delay: 5 * time.Minute,
				Match: func(r *http.Request) bool {
					if !tt.when(r) {
						return false
					}
					once.Do(func() {
						sawState = strings.Contains(r.URL.RawQuery, "_state=")
						cancel(relSignal{syscall.SIGINT}) // interrupted while this request is in flight
					})
					return true
				}})
			res := relRun(t, ctx, relEnv(t), "push", "--platforms", "linux/amd64", "--base", "scratch",
				"--tag", p.Addr()+"/g/app:v1", "--tag", p.Addr()+"/g/app:latest", "./cmd/app")
			assert.Equal(t, 130, res.code)
			assert.Equal(t, "helperbuild: "+strings.ReplaceAll(tt.want, "{host}", p.Addr()), errorLineOf(t, res))
			assert.Equal(t, tt.state, sawState, "the request interrupted had session state")
			assert.NotContains(t, res.stderr, "_state")
			assert.NotContains(t, res.stderr, "SESSIONSECRET")
		})
	}
}

// TestInterruptedAfterTheRegistryStoredTheTag is issue 25's case: the tag's
// PUT reached the registry, which stored it, and the run was interrupted
// before the answer came back. The tag is listed as "may have been
// written", and the registry does hold it.
func TestInterruptedAfterTheRegistryStoredTheTag(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	reg := relRegistry(t, "", "")
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	target, err := url.Parse("http://" + reg)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		r := resp.Request
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/latest") {
			cancel(relSignal{syscall.SIGINT}) // stored; interrupted before the answer
			<-r.Context().Done()              // the answer never reaches helperbuild
			return r.Context().Err()
		}
		return nil
	}
	rp.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	res := relRun(t, ctx, relEnv(t), "push", "--platforms", "linux/amd64", "--base", "scratch",
		"--tag", host+"/g/app:v1", "--tag", host+"/g/app:latest", "./cmd/app")
	assert.Equal(t, 130, res.code, res.stderr)
	assert.Equal(t, "helperbuild: interrupted: tagged "+host+"/g/app:v1; may have been written: "+host+"/g/app:latest; run again to write the rest", errorLineOf(t, res))
	ref, err := name.ParseReference(reg + "/g/app:latest")
	require.NoError(t, err)
	_, err = remote.Head(ref)
	assert.NoError(t, err, "the registry holds the tag the message says may have been written")
}

// TestNoSessionStateInLogs: a push whose uploads fail and are retried logs
// no upload location with its session state.
func TestNoSessionStateInLogs(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	reg := stateRegistry(t)
	p := relProxy(t, faultproxy.Options{Target: "http://" + reg, Seed: 3, Rate: 1, MaxPerKey: 1,
		Faults: []faultproxy.Fault{faultproxy.Status5xx, faultproxy.ResetMidBody},
		Match:  func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/blobs/uploads/") }})
	res := relRun(t, t.Context(), relEnv(t), "push", "--platforms", "linux/amd64", "--base", "scratch", "--tag", p.Addr()+"/g/app:v1", "./cmd/app")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotEmpty(t, p.Stats().Injected)
	assert.NotContains(t, res.stderr, "_state")
	assert.NotContains(t, res.stderr, "SESSIONSECRET")
}
