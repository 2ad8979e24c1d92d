package testkit

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
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

// BlobCounter counts the blob downloads (GET .../blobs/DIGEST) a Registry
// serves, by digest; its Wrap goes into Registry's wraps.
type BlobCounter struct {
	mu   sync.Mutex
	gets map[string]int
}

// blobGet matches the path of a blob download and captures its digest.
var blobGet = regexp.MustCompile(`^/v2/.+/blobs/(sha256:[0-9a-f]{64})$`)

// Wrap counts the downloads next serves.
func (c *BlobCounter) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := blobGet.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
			c.mu.Lock()
			if c.gets == nil {
				c.gets = map[string]int{}
			}
			c.gets[m[1]]++
			c.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// Gets returns how many times each blob was downloaded so far.
func (c *BlobCounter) Gets() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.gets))
	for d, n := range c.gets {
		out[d] = n
	}
	return out
}

// RequestLog is a Registry wrap that records every request: "METHOD PATH",
// with "?mount=DIGEST&from=REPO" kept for cross-repository mounts.
type RequestLog struct {
	mu   sync.Mutex
	reqs []string
}

// Wrap records the requests next serves.
func (l *RequestLog) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.URL.Path
		if q := r.URL.Query(); q.Get("mount") != "" {
			line += "?mount=" + q.Get("mount") + "&from=" + q.Get("from")
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, line)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// Take returns the requests recorded since the last Take, and forgets them.
func (l *RequestLog) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs = nil
	return out
}

// ReferrersRegistry is Registry with the OCI 1.1 referrers API
// (GET /v2/NAME/referrers/DIGEST) turned on.
func ReferrersRegistry(t testing.TB, wraps ...func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true))
	for _, wrap := range wraps {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// digestTag is a manifest path naming a tag of the form sha256-<hex>.
var digestTag = regexp.MustCompile(`^(/v2/.+/manifests/)sha256-([0-9a-f]{64})$`)

// ResolvesDigestTags is a Registry wrap that reads the tag sha256-<hex>
// as the manifest with digest sha256:<hex>, as GitLab's container
// registry does: there the OCI referrers fallback tag names the subject
// itself.
func ResolvesDigestTags(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := digestTag.FindStringSubmatch(r.URL.Path); m != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			r = r.Clone(r.Context())
			r.URL.Path = m[1] + "sha256:" + m[2]
		}
		next.ServeHTTP(w, r)
	})
}
