package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const blobSize = 1000

// backend answers like a tiny registry: blob downloads and upload PATCHes.
func backend(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Docker-Content-Digest", "sha256:x")
			w.Header().Set("Content-Length", fmt.Sprint(blobSize))
			_, _ = io.WriteString(w, strings.Repeat("b", blobSize))
		case http.MethodPatch:
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Location", "http://"+r.Host+"/v2/g/h/blobs/uploads/next")
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func start(t *testing.T, o Options) *Proxy {
	t.Helper()
	p, err := Start(o)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// plain is a client without retries or connection reuse, so every fault is
// seen as is.
func plain() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func TestEachFaultAsAPlainClientSeesIt(t *testing.T) {
	get := func(p *Proxy) (*http.Response, []byte, error) {
		resp, err := plain().Get(p.URL() + "/v2/g/h/blobs/sha256:x")
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	patch := func(p *Proxy) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPatch, p.URL()+"/v2/g/h/blobs/uploads/abc?_state=s", strings.NewReader(strings.Repeat("u", 256<<10)))
		resp, err := plain().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	tests := []struct {
		fault    Fault
		check    func(t *testing.T, p *Proxy)
		upstream int32
	}{
		{fault: None, upstream: 2, check: func(t *testing.T, p *Proxy) {
			resp, b, err := get(p)
			require.NoError(t, err)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Len(t, b, blobSize)
			presp, err := patch(p)
			require.NoError(t, err)
			assert.Equal(t, 202, presp.StatusCode)
			assert.Equal(t, p.URL()+"/v2/g/h/blobs/uploads/next", presp.Header.Get("Location"), "Location points back at the proxy")
		}},
		{fault: Status5xx, check: func(t *testing.T, p *Proxy) {
			resp, _, err := get(p)
			require.NoError(t, err)
			assert.Contains(t, []int{500, 502, 503, 504}, resp.StatusCode)
		}},
		{fault: TooMany, check: func(t *testing.T, p *Proxy) {
			resp, _, err := get(p)
			require.NoError(t, err)
			assert.Equal(t, 429, resp.StatusCode)
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		}},
		{fault: ResetMidBody, upstream: 1, check: func(t *testing.T, p *Proxy) {
			resp, b, err := get(p)
			require.Error(t, err, "the download breaks")
			assert.Equal(t, 200, resp.StatusCode)
			assert.Less(t, len(b), blobSize)
			assert.True(t, errors.Is(err, syscall.ECONNRESET), "got %v", err)
			_, err = patch(p)
			require.Error(t, err, "the upload breaks and is not forwarded")
		}},
		{fault: Truncate, upstream: 1, check: func(t *testing.T, p *Proxy) {
			resp, b, err := get(p)
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Len(t, b, blobSize/2)
		}},
		{fault: Slow, check: func(t *testing.T, p *Proxy) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/v2/g/h/blobs/sha256:x", nil)
			_, err := plain().Do(req)
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			srv, hits := backend(t)
			p := start(t, Options{Target: srv.URL, Persistent: tt.fault != None, Faults: []Fault{tt.fault}})
			tt.check(t, p)
			st := p.Stats()
			if tt.fault != None {
				assert.Equal(t, st.Requests, st.Faults[tt.fault], "persistent: every request faulted")
			} else {
				assert.Empty(t, st.Faults)
			}
			if tt.fault != Slow { // a slow request may or may not reach the backend after the client left
				assert.Equal(t, tt.upstream, hits.Load())
			}
		})
	}
}

// requests is a fixed request sequence touching several keys.
func requests(base string) []*http.Request {
	var out []*http.Request
	for i := range 60 {
		var req *http.Request
		switch i % 4 {
		case 0:
			req, _ = http.NewRequest(http.MethodGet, base+"/v2/", nil)
		case 1:
			req, _ = http.NewRequest(http.MethodHead, fmt.Sprintf("%s/v2/g/h/blobs/sha256:%d", base, i%3), nil)
		case 2:
			req, _ = http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/v2/g/h/blobs/uploads/%d?_state=%d", base, i, i), strings.NewReader("data"))
		case 3:
			req, _ = http.NewRequest(http.MethodPut, fmt.Sprintf("%s/v2/g/h/manifests/v%d", base, i%2), strings.NewReader("{}"))
		}
		out = append(out, req)
	}
	return out
}

func schedule(t *testing.T, seed int64, parallel int) []Injection {
	t.Helper()
	srv, _ := backend(t)
	p := start(t, Options{Target: srv.URL, Seed: seed, Rate: 0.3, Faults: []Fault{Status5xx, TooMany}})
	reqs := requests(p.URL())
	var wg sync.WaitGroup
	next := make(chan *http.Request)
	for range parallel {
		wg.Go(func() {
			for req := range next {
				if resp, err := plain().Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	for _, r := range reqs {
		next <- r
	}
	close(next)
	wg.Wait()
	got := p.Stats().Injected
	slices.SortFunc(got, func(a, b Injection) int {
		return strings.Compare(fmt.Sprintf("%s %03d", a.Key, a.Attempt), fmt.Sprintf("%s %03d", b.Key, b.Attempt))
	})
	return got
}

func TestScheduleIsDeterministic(t *testing.T) {
	first := schedule(t, 42, 1)
	require.NotEmpty(t, first)
	assert.Less(t, len(first), 60)
	assert.Equal(t, first, schedule(t, 42, 1), "same seed, same sequence")
	assert.Equal(t, first, schedule(t, 42, 8), "concurrency does not change the schedule")
	assert.NotEqual(t, first, schedule(t, 43, 1), "another seed, another schedule")
	for _, in := range first {
		if in.Fault == Status5xx {
			assert.Contains(t, statuses, in.Status)
		}
	}
}

func TestTransientFaultsAreBoundedPerKey(t *testing.T) {
	srv, _ := backend(t)
	p := start(t, Options{Target: srv.URL, Rate: 1, MaxPerKey: 3, Faults: []Fault{Status5xx}})
	var codes []int
	for range 5 {
		resp, err := plain().Get(p.URL() + "/v2/")
		require.NoError(t, err)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	assert.NotEqual(t, 200, codes[2])
	assert.Equal(t, []int{200, 200}, codes[3:])
	assert.Equal(t, 3, p.Stats().Faults[Status5xx])
}

func TestMatchSelectsEligibleRequests(t *testing.T) {
	srv, _ := backend(t)
	p := start(t, Options{Target: srv.URL, Persistent: true, Faults: []Fault{TooMany},
		Match: func(r *http.Request) bool { return r.Method == http.MethodPut }})
	resp, err := plain().Get(p.URL() + "/v2/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodPut, p.URL()+"/v2/g/h/manifests/v1", strings.NewReader("{}"))
	resp, err = plain().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 429, resp.StatusCode)
}

func TestStartValidates(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Target: "http://example.com:5000"}, "loopback only"},
		{Options{Target: "https://127.0.0.1:5000"}, "loopback only"},
		{Options{Target: "http://127.0.0.1:5000", Rate: 1.5}, "want a fraction"},
		{Options{Target: "::"}, "target"},
	} {
		_, err := Start(tt.o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestRequestKey(t *testing.T) {
	for in, want := range map[string]string{
		"/v2/g/h/blobs/uploads/123?_state=x": "PATCH /v2/g/h/blobs/uploads/*",
		"/v2/g/h/blobs/uploads/":             "PATCH /v2/g/h/blobs/uploads/",
		"/v2/g/h/manifests/v1":               "PATCH /v2/g/h/manifests/v1",
	} {
		req, err := http.NewRequest(http.MethodPatch, "http://x"+in, nil)
		require.NoError(t, err)
		assert.Equal(t, want, requestKey(req))
	}
}

// TestEveryNthIsARateLimit: with Every 3, exactly every third request is
// answered 429 with Retry-After, in arrival order over all keys; the
// target's answers and the bytes it accepted are counted.
func TestEveryNthIsARateLimit(t *testing.T) {
	srv, hits := backend(t)
	p := start(t, Options{Target: srv.URL, Every: 3, Faults: []Fault{TooMany}})
	c := plain()
	var got []int
	for i := range 9 {
		method, body := http.MethodGet, io.Reader(nil)
		if i%2 == 1 {
			method, body = http.MethodPatch, strings.NewReader(strings.Repeat("u", 100))
		}
		req, err := http.NewRequest(method, p.URL()+fmt.Sprintf("/v2/g/h/blobs/uploads/%d", i), body)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		}
	}
	assert.Equal(t, []int{200, 202, 429, 202, 200, 429, 200, 202, 429}, got)
	st := p.Stats()
	assert.Equal(t, 3, st.Faults[TooMany])
	assert.Equal(t, int32(6), hits.Load(), "429s are not forwarded")
	assert.Equal(t, map[int]int{200: 3, 202: 3}, st.Statuses)
	assert.Equal(t, int64(300), st.Uploaded, "three PATCHes of 100 bytes reached the target")

	_, err := Start(Options{Target: srv.URL, Every: -1})
	require.ErrorContains(t, err, "every -1")
}
