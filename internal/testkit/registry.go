package testkit

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry starts go-containerregistry's in-process registry, its log
// discarded, behind an httptest server on 127.0.0.1 that stops when the test
// ends, and returns its host:port. Each wrap wraps the registry's handler in
// turn (the last one sees a request first): a test counts, fails or
// authenticates requests there.
func Registry(t testing.TB, wraps ...func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	for _, wrap := range wraps {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// BasicAuth is a Registry wrap that answers a request without HTTP basic
// authentication as user and password the way a registry does: 401, a
// WWW-Authenticate challenge and an UNAUTHORIZED error in the body.
func BasicAuth(user, password string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="helperbuild-test"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
