package retry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransientFailuresAreRetried(t *testing.T) {
	status := func(code int) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
	}
	tests := []struct {
		name   string
		fail   func(t *testing.T) func(http.ResponseWriter, *http.Request)
		reason string
	}{
		{name: "408", fail: func(*testing.T) func(http.ResponseWriter, *http.Request) { return status(408) }, reason: "status 408"},
		{name: "429", fail: func(*testing.T) func(http.ResponseWriter, *http.Request) { return status(429) }, reason: "status 429"},
		{name: "500", fail: func(*testing.T) func(http.ResponseWriter, *http.Request) { return status(500) }, reason: "status 500"},
		{name: "502", fail: func(*testing.T) func(http.ResponseWriter, *http.Request) { return status(502) }, reason: "status 502"},
		{name: "503", fail: func(*testing.T) func(http.ResponseWriter, *http.Request) { return status(503) }, reason: "status 503"},
		{name: "504", fail: func(*testing.T) func(http.ResponseWriter, *http.Request) { return status(504) }, reason: "status 504"},
		{name: "reset", fail: func(t *testing.T) func(http.ResponseWriter, *http.Request) {
			return func(w http.ResponseWriter, _ *http.Request) { reset(t, w) }
		}, reason: "connection reset"},
		{name: "EOF", fail: func(t *testing.T) func(http.ResponseWriter, *http.Request) {
			return func(w http.ResponseWriter, _ *http.Request) { closeConn(t, w) }
		}, reason: "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail := tt.fail(t)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n < 2 {
					fail(w, r)
					return
				}
				_, _ = io.WriteString(w, "ok")
			})
			f := newFixture(t, nil, nil)
			resp, err := f.client().Get(srv.URL + "/v2/")
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, "ok", string(body))
			assert.Equal(t, 200, resp.StatusCode)
			assert.EqualValues(t, 3, srv.hits.Load())
			assert.Equal(t, map[string]int{tt.reason: 2}, f.rt.Stats().Retries)
			assert.Len(t, f.logs.Lines(), 2, "one log line per retry")
		})
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { _, _ = io.WriteString(w, "ok") })
	next := &refusedThenReal{k: 2, closed: closedPort(t)}
	f := newFixture(t, next, nil)
	resp, err := f.client().Get(srv.URL + "/v2/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, map[string]int{"connection refused": 2}, f.rt.Stats().Retries)
}

func TestStalledAttemptTimesOutAndIsRetried(t *testing.T) {
	f := newFixture(t, nil, func(o *Options) { o.Timeout = time.Minute })
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			f.timers.fire(t)     // no answer for Timeout
			<-r.Context().Done() // never answers; the client gives up
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	resp, err := f.client().Get(srv.URL + "/v2/")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "ok", string(body))
	assert.Equal(t, map[string]int{"timeout": 1}, f.rt.Stats().Retries)
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 405, 416} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(code) })
			f := newFixture(t, nil, nil)
			resp, err := f.client().Get(srv.URL + "/v2/x/manifests/latest")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, code, resp.StatusCode)
			assert.EqualValues(t, 1, srv.hits.Load())
			assert.Zero(t, f.rt.Stats().Total())
			assert.Empty(t, f.logs.Lines())
		})
	}
}

func TestBackoffIsFullJitterExponentialAndCapped(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(503) })
	f := newFixture(t, nil, func(o *Options) {
		o.Retries, o.Base, o.Max = 6, 100*time.Millisecond, time.Second
	})
	resp, err := f.client().Get(srv.URL + "/v2/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode, "the last response is returned when retries run out")
	assert.EqualValues(t, 7, srv.hits.Load())
	ms := time.Millisecond
	// Rand is 0.5: half of 100, 200, 400, 800, then the 1s cap.
	assert.Equal(t, []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 500 * ms, 500 * ms}, f.sleeps.all())
	assert.Equal(t, 1, f.rt.Stats().GaveUp)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, header string
		want         time.Duration
	}{
		// Rand is 0.5: what the header asks, plus half the first window (100ms).
		{"seconds", "3", 3*time.Second + 50*time.Millisecond},
		{"date", now.Add(7 * time.Second).Format(http.TimeFormat), 7*time.Second + 50*time.Millisecond},
		{"date in the past", now.Add(-time.Hour).Format(http.TimeFormat), 50 * time.Millisecond},
		{"capped", "3600", 30*time.Second + 50*time.Millisecond},
		{"garbage falls back to backoff", "soon", 50 * time.Millisecond},
		{"shorter than the backoff", "0", 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
				if n == 0 {
					w.Header().Set("Retry-After", tt.header)
					w.WriteHeader(429)
				}
			})
			f := newFixture(t, nil, func(o *Options) {
				o.Base, o.MaxRetryAfter = 100*time.Millisecond, 30*time.Second
				o.Now = func() time.Time { return now }
			})
			resp, err := f.client().Get(srv.URL + "/v2/")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, []time.Duration{tt.want}, f.sleeps.all())
		})
	}
}

func TestExhaustedRetriesNameTheLastReason(t *testing.T) {
	f := newFixture(t, nil, func(o *Options) { o.Retries = 2 })
	addr := closedPort(t)
	_, err := f.client().Get("http://" + addr + "/v2/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gave up after 3 attempts (last: connection refused)")
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED))
	var re *Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 3, re.Attempts)
	// Rand 0.5: half of 200ms, then half of 400ms.
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, f.sleeps.all())
	assert.Equal(t, Stats{Retries: map[string]int{"connection refused": 2}, GaveUp: 1, Hosts: []string{addr},
		PerHost: map[string]HostRetries{addr: {Retries: 2, Last: "connection refused"}}, Waited: 300 * time.Millisecond}, f.rt.Stats())
}

func TestZeroRetries(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(502) })
	f := newFixture(t, nil, func(o *Options) { o.Retries = 0 })
	resp, err := f.client().Get(srv.URL + "/v2/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.EqualValues(t, 1, srv.hits.Load())
	assert.Empty(t, f.sleeps.all())
}

func TestBodiesAreReplayedOnlyWhenSafe(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		path     string
		body     func() io.Reader
		wantHits int32
	}{
		// http.NewRequest sets GetBody for a strings.Reader: replayable.
		{"manifest PUT with GetBody", http.MethodPut, "/v2/g/h/manifests/v1", func() io.Reader { return strings.NewReader(`{"a":1}`) }, 3},
		{"POST without GetBody", http.MethodPost, "/v2/token", func() io.Reader { return io.MultiReader(strings.NewReader("x=1")) }, 1},
		{"blob PATCH, even with GetBody", http.MethodPatch, "/v2/g/h/blobs/uploads/123", func() io.Reader { return strings.NewReader("blob") }, 1},
		{"blob commit PUT", http.MethodPut, "/v2/g/h/blobs/uploads/123", func() io.Reader { return nil }, 1},
		{"upload start POST", http.MethodPost, "/v2/g/h/blobs/uploads/", func() io.Reader { return nil }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bodies []string
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, string(b))
				if n < 2 {
					w.WriteHeader(503)
				}
			})
			f := newFixture(t, nil, nil)
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, tt.body())
			require.NoError(t, err)
			resp, err := f.rt.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.wantHits, srv.hits.Load())
			for _, b := range bodies[1:] {
				assert.Equal(t, bodies[0], b, "every attempt sends the whole body")
			}
		})
	}
}

func TestRetryLogLine(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 0 {
			w.WriteHeader(503)
		}
	})
	f := newFixture(t, nil, nil)
	u := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/v2/g/h/blobs/uploads/?_state=SECRET&digest=sha256:1"
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	resp, err := f.rt.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	lines := f.logs.Lines()
	require.Len(t, lines, 1)
	line := lines[0]
	for _, want := range []string{"level=INFO", `msg="retrying request"`, "method=GET", "url=" + srv.URL + "/v2/g/h/blobs/uploads/ ", `reason="status 503"`, "attempt=1/5", "wait=100ms"} {
		assert.Contains(t, line, want)
	}
	for _, secret := range []string{"hunter2", "SECRET", "user", "digest="} {
		assert.NotContains(t, line, secret)
	}
}

func TestCancelDuringBackoffStopsWaiting(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(503) })
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	interrupted := errors.New("SIGINT")
	waiting := make(chan struct{})
	go func() { <-waiting; cancel(interrupted) }()
	f := newFixture(t, nil, func(o *Options) {
		o.Base, o.Max = time.Hour, time.Hour // a real wait that only cancellation ends
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			close(waiting)
			return sleep(ctx, d)
		}
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v2/", nil)
	require.NoError(t, err)
	_, err = f.rt.RoundTrip(req)
	require.Error(t, err)
	assert.ErrorIs(t, err, interrupted)
	assert.Contains(t, err.Error(), "waiting to retry after status 503")
	assert.EqualValues(t, 1, srv.hits.Load())
}

func TestCancelledRequestIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		cancel()
		w.WriteHeader(503)
	})
	f := newFixture(t, nil, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v2/", nil)
	require.NoError(t, err)
	resp, err := f.rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	assert.EqualValues(t, 1, srv.hits.Load())
	assert.Empty(t, f.sleeps.all())
}

func TestOptionsAreValidated(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"negative retries", func(o *Options) { o.Retries = -1 }, "retries must be 0 or more, got -1"},
		{"negative timeout", func(o *Options) { o.Timeout = -time.Second }, "timeout must be 0"},
		{"cap below base", func(o *Options) { o.Base, o.Max = time.Second, time.Millisecond }, "backoff cap 1ms is below its base 1s"},
		{"negative base", func(o *Options) { o.Base = -1 }, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.mod(&o)
			_, err := New(nil, o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := New(nil, Options{})
	assert.NoError(t, err, "the zero Options is valid: no retries")
}

func TestStatsString(t *testing.T) {
	assert.Equal(t, "no retries", Stats{}.String())
	assert.Equal(t, "3 retries (1 connection reset, 2 status 503)",
		Stats{Retries: map[string]int{"status 503": 2, "connection reset": 1}}.String())
	assert.Equal(t, "no retries, 1 requests failed after their last retry", Stats{GaveUp: 1}.String())
}
