package retry

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// faultyRegistry is an in-process registry whose requests pass through fault
// first; it counts requests by "METHOD kind" (kind: manifest, upload, blob).
type faultyRegistry struct {
	host  string
	mu    sync.Mutex
	count map[string]int
}

func kindOf(r *http.Request) string {
	switch {
	case strings.Contains(r.URL.Path, "/manifests/"):
		return r.Method + " manifest"
	case strings.Contains(r.URL.Path, "/blobs/uploads/"):
		return r.Method + " upload"
	case strings.Contains(r.URL.Path, "/blobs/"):
		return r.Method + " blob"
	}
	return r.Method + " " + r.URL.Path
}

// fault returns true when it answered the request itself; n is the number
// of earlier requests of the same kind.
type fault func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool

func newFaultyRegistry(t *testing.T, f fault) *faultyRegistry {
	t.Helper()
	fr := &faultyRegistry{count: map[string]int{}}
	fr.host = testkit.Registry(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k := kindOf(r)
			fr.mu.Lock()
			n := fr.count[k]
			fr.count[k]++
			fr.mu.Unlock()
			if f != nil && f(t, w, r, k, n) {
				return
			}
			reg.ServeHTTP(w, r)
		})
	})
	return fr
}

func (fr *faultyRegistry) n(kind string) int {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.count[kind]
}

func TestWithGoContainerRegistry(t *testing.T) {
	tests := []struct {
		name      string
		fault     fault
		wantErr   string
		wantStats map[string]int
		check     func(t *testing.T, fr *faultyRegistry)
	}{
		{
			name: "blob PATCH 503 once: the upload is restarted once",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "PATCH upload" && n == 0 {
					w.WriteHeader(503)
					return true
				}
				return false
			},
			wantStats: map[string]int{"blob upload restarted: status 503": 1},
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.Equal(t, 3, fr.n("PATCH upload"), "config and layer, one of them twice")
			},
		},
		{
			name: "blob PATCH reset mid-body: the upload is restarted",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "PATCH upload" && n == 0 {
					_, _ = io.CopyN(io.Discard, r.Body, 100)
					reset(t, w)
					return true
				}
				return false
			},
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.Equal(t, 3, fr.n("PATCH upload"))
			},
		},
		{
			name: "manifest PUT 503 once: retried by this transport alone",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "PUT manifest" && n == 0 {
					w.WriteHeader(503)
					return true
				}
				return false
			},
			wantStats: map[string]int{"status 503": 1},
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.Equal(t, 2, fr.n("PUT manifest"))
			},
		},
		{
			name: "blob HEAD always 503: Retries+1 attempts, not multiplied by go-containerregistry",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "HEAD blob" {
					w.WriteHeader(503)
					return true
				}
				return false
			},
			wantErr: "503",
			check: func(t *testing.T, fr *faultyRegistry) {
				// Two blobs are checked at most (config and layer), 3 attempts each.
				assert.LessOrEqual(t, fr.n("HEAD blob"), 6)
				assert.GreaterOrEqual(t, fr.n("HEAD blob"), 3)
				assert.Zero(t, fr.n("PATCH upload"))
			},
		},
		{
			name: "blob PATCH 429 once: sent again in place, the upload not restarted",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "PATCH upload" && n == 0 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(http.StatusTooManyRequests)
					return true
				}
				return false
			},
			wantStats: map[string]int{"status 429": 1},
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.Equal(t, 3, fr.n("PATCH upload"), "config and layer, one of them twice")
				assert.Equal(t, 2, fr.n("POST upload"), "no upload started again")
			},
		},
		{
			name: "every third request 429 (a rate limit): the push gets through",
			fault: func() fault {
				var mu sync.Mutex
				all := 0
				return func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
					mu.Lock()
					all++
					limited := all%3 == 0
					mu.Unlock()
					if limited {
						w.Header().Set("Retry-After", "0")
						w.WriteHeader(http.StatusTooManyRequests)
					}
					return limited
				}
			}(),
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.Positive(t, fr.n("PUT manifest"))
			},
		},
		{
			name: "blob PATCH always 429: Retries+1 attempts in place, no restart on top, then the push fails",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "PATCH upload" {
					w.WriteHeader(http.StatusTooManyRequests)
					return true
				}
				return false
			},
			wantErr: "429 Too Many Requests",
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.LessOrEqual(t, fr.n("PATCH upload"), 6, "two blobs at most, 3 attempts each")
				assert.GreaterOrEqual(t, fr.n("PATCH upload"), 3)
			},
		},
		{
			name: "blob PATCH always 503: restarted Retries times, then the push fails",
			fault: func(t *testing.T, w http.ResponseWriter, r *http.Request, kind string, n int) bool {
				if kind == "PATCH upload" {
					w.WriteHeader(503)
					return true
				}
				return false
			},
			wantErr: "503 Service Unavailable",
			check: func(t *testing.T, fr *faultyRegistry) {
				assert.LessOrEqual(t, fr.n("PATCH upload"), 6)
				assert.GreaterOrEqual(t, fr.n("PATCH upload"), 3)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := newFaultyRegistry(t, tt.fault)
			f := newFixture(t, nil, func(o *Options) { o.Retries, o.Base, o.Max = 2, time.Millisecond, 2*time.Millisecond })
			img, err := random.Image(4096, 1)
			require.NoError(t, err)
			ref, err := name.ParseReference(fr.host + "/g/helper:v1")
			require.NoError(t, err)
			opts := append([]remote.Option{remote.WithTransport(f.rt), remote.WithContext(t.Context())}, f.rt.RemoteOptions()...)
			err = remote.Write(ref, img, opts...)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			} else {
				require.NoError(t, err)
				got, err := remote.Image(ref, opts...)
				require.NoError(t, err)
				want, _ := img.Digest()
				gotDigest, _ := got.Digest()
				assert.Equal(t, want, gotDigest)
			}
			if tt.wantStats != nil {
				assert.Equal(t, tt.wantStats, f.rt.Stats().Retries)
			}
			tt.check(t, fr)
		})
	}
}

func TestUploadBackoff(t *testing.T) {
	f := newFixture(t, nil, nil) // 5 retries, 200ms .. 10s
	b := f.rt.uploadBackoff()
	assert.Equal(t, 6, b.Steps)
	assert.Equal(t, 200*time.Millisecond, b.Duration)
	assert.Equal(t, 2.0, b.Factor)
	f = newFixture(t, nil, func(o *Options) { o.Retries, o.Base, o.Max = 9, time.Second, 4*time.Second })
	b = f.rt.uploadBackoff()
	assert.InDelta(t, 1.189, b.Factor, 0.001, "the last restart waits about Max, not 2^8 s")
	assert.Zero(t, b.Cap)
}
