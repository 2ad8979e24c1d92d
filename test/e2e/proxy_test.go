//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// countingProxy is a reverse proxy in front of a registry that records every request, so a
// test can tell what a client really sent (e.g. that a re-push uploaded no blob). The
// registry builds upload URLs from the Host header, which the proxy passes through, so
// every request of an upload session comes back through the proxy.
type countingProxy struct {
	Host string // "localhost:PORT": use it in image references instead of the registry's

	mu       sync.Mutex
	requests []string // "METHOD /path"
	mounts   int      // blob upload starts asking to mount from another repository
}

// startCountingProxy starts a proxy to the plain registry r for the rest of the test.
func startCountingProxy(t *testing.T, r *registry) *countingProxy {
	t.Helper()
	target, err := url.Parse(r.baseURL())
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, req.Method+" "+req.URL.Path)
		if req.Method == http.MethodPost && req.URL.Query().Get("from") != "" {
			p.mounts++
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	p.Host = "localhost:" + strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	return p
}

// blobUploadPath matches the distribution API's blob upload endpoints (start, chunk,
// finish, cross-repository mount).
var blobUploadPath = regexp.MustCompile(`^/v2/.+/blobs/uploads/`)

// blobUploads returns the requests that sent blob data (PATCH or PUT on an
// upload). helperbuild's push-permission probe starts an upload and deletes
// it (POST then DELETE) without sending a byte, so it does not count.
func (p *countingProxy) blobUploads() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.requests {
		method, path, _ := strings.Cut(r, " ")
		if (method == http.MethodPatch || method == http.MethodPut) && blobUploadPath.MatchString(path) {
			out = append(out, r)
		}
	}
	return out
}

// summary counts the requests seen so far by method and kind, e.g. "HEAD blob: 12".
func (p *countingProxy) summary() string {
	counts := map[string]int{}
	for _, r := range p.all() {
		method, path, _ := strings.Cut(r, " ")
		kind := "other"
		switch {
		case blobUploadPath.MatchString(path):
			kind = "blob upload"
		case strings.Contains(path, "/blobs/"):
			kind = "blob"
		case strings.Contains(path, "/manifests/"):
			kind = "manifest"
		}
		counts[method+" "+kind]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// all returns every request seen so far.
func (p *countingProxy) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// mountRequests counts blob uploads started with ?mount=...&from=REPO.
func (p *countingProxy) mountRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mounts
}
