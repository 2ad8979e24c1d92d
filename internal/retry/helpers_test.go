package retry

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// server answers attempt n (0-based) of every request with handle.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.hits.Add(1)) - 1
		handle(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

// reset closes the client's connection with a TCP RST.
func reset(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// closeConn closes the client's connection without a response (EOF).
func closeConn(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// sleeps records the waits a Transport asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return context.Cause(ctx)
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// stallTimers stand in for the attempts' stall timers: none fires by
// itself, so no test depends on how fast a loaded machine answers; fire
// runs the newest one, as if Timeout had passed without progress.
type stallTimers struct {
	mu  sync.Mutex
	all []*fakeTimer
}

type fakeTimer struct {
	mu      sync.Mutex
	f       func()
	stopped bool
}

func (ft *fakeTimer) Reset(time.Duration) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	was := !ft.stopped
	ft.stopped = false
	return was
}

func (ft *fakeTimer) Stop() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	was := !ft.stopped
	ft.stopped = true
	return was
}

func (s *stallTimers) afterFunc(_ time.Duration, f func()) stallTimer {
	s.mu.Lock()
	defer s.mu.Unlock()
	ft := &fakeTimer{f: f}
	s.all = append(s.all, ft)
	return ft
}

// fire runs the newest attempt's timer, which must be running.
func (s *stallTimers) fire(t *testing.T) {
	s.mu.Lock()
	var ft *fakeTimer
	if len(s.all) > 0 {
		ft = s.all[len(s.all)-1]
	}
	s.mu.Unlock()
	if ft == nil {
		t.Error("no attempt has a stall timer")
		return
	}
	ft.mu.Lock()
	running := !ft.stopped
	ft.stopped = true
	ft.mu.Unlock()
	if !running {
		t.Error("the newest attempt's stall timer is stopped")
		return
	}
	ft.f()
}

// fixture is a Transport with recorded sleeps and logs and stall timers
// fired by hand; jitter is fixed at 0.5.
type fixture struct {
	rt     *Transport
	sleeps *sleeps
	timers *stallTimers
	logs   *testkit.Buffer
}

func newFixture(t *testing.T, next http.RoundTripper, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{sleeps: &sleeps{}, timers: &stallTimers{}, logs: &testkit.Buffer{}}
	o := DefaultOptions()
	o.Rand = func() float64 { return 0.5 }
	o.Sleep = f.sleeps.sleep
	o.afterFunc = f.timers.afterFunc
	o.Logger = slog.New(slog.NewTextHandler(f.logs, nil))
	if mod != nil {
		mod(&o)
	}
	rt, err := New(next, o)
	require.NoError(t, err)
	f.rt = rt
	return f
}

func (f *fixture) client() *http.Client { return &http.Client{Transport: f.rt} }

// refusedThenReal sends the first k attempts to a closed port, then to the
// real server: a real "connection refused".
type refusedThenReal struct {
	k      int32
	n      atomic.Int32
	closed string // host:port nobody listens on
}

func (r *refusedThenReal) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.n.Add(1) <= r.k {
		req = req.Clone(req.Context())
		req.URL.Host = r.closed
	}
	return http.DefaultTransport.RoundTrip(req)
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
