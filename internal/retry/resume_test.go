package retry

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const blob = "0123456789abcdefghijklmnopqrstuvwxyz"

// writeTruncated answers with the full Content-Length but only the first
// half of body, then closes the connection.
func writeTruncated(t *testing.T, w http.ResponseWriter, h http.Header, body string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n", len(body))
	_ = h.Write(buf)
	fmt.Fprintf(buf, "\r\n%s", body[:len(body)/2])
	_ = buf.Flush()
}

// serveRange answers a Range request like a registry does.
func serveRange(w http.ResponseWriter, r *http.Request, body string) {
	var start, end int
	if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &start, &end); err != nil {
		w.WriteHeader(400)
		return
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, len(body)))
	w.WriteHeader(http.StatusPartialContent)
	_, _ = io.WriteString(w, body[start:end+1])
}

func TestBodyCutShortIsResumed(t *testing.T) {
	digest := http.Header{"Docker-Content-Digest": {"sha256:abc"}}
	tests := []struct {
		name string
		// second answers the request after the cut.
		second  func(w http.ResponseWriter, r *http.Request)
		first   http.Header
		wantErr string
		resumed bool
	}{
		{name: "range honoured", first: digest, resumed: true, second: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Docker-Content-Digest", "sha256:abc")
			serveRange(w, r, blob)
		}},
		{name: "range ignored: the prefix is skipped", first: digest, resumed: true, second: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Docker-Content-Digest", "sha256:abc")
			_, _ = io.WriteString(w, blob)
		}},
		{name: "strong ETag", first: http.Header{"Etag": {`"v1"`}}, resumed: true, second: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"v1"`)
			serveRange(w, r, blob)
		}},
		{name: "content changed", first: digest, resumed: true, wantErr: "cannot be resumed: the content changed", second: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Docker-Content-Digest", "sha256:def")
			serveRange(w, r, blob)
		}},
		{name: "wrong range", first: digest, resumed: true, wantErr: "asked for bytes 18-35/36, got 0-35/36", second: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Docker-Content-Digest", "sha256:abc")
			r.Header.Set("Range", "bytes=0-35")
			serveRange(w, r, blob)
		}},
		{name: "no validator: not resumed", first: http.Header{"Etag": {`W/"weak"`}}, wantErr: "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					writeTruncated(t, w, tt.first, blob)
					return
				}
				tt.second(w, r)
			})
			f := newFixture(t, nil, nil)
			resp, err := f.client().Get(srv.URL + "/v2/g/h/blobs/sha256:abc")
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, blob, string(got))
			}
			if tt.resumed {
				assert.Equal(t, map[string]int{"body cut short: unexpected EOF": 1}, f.rt.Stats().Retries)
				require.Len(t, f.logs.Lines(), 1)
				assert.Contains(t, f.logs.Lines()[0], "body cut short after 18 of 36 bytes")
			} else {
				assert.Zero(t, f.rt.Stats().Total())
			}
		})
	}
}

func TestBodyResumeSharesTheRetryBudget(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			w.WriteHeader(503)
			return
		}
		// Every later answer breaks off: the budget of 2 retries is spent
		// by one status retry and one resume.
		writeTruncated(t, w, http.Header{"Docker-Content-Digest": {"sha256:abc"}}, blob)
	})
	f := newFixture(t, nil, func(o *Options) { o.Retries = 2 })
	resp, err := f.client().Get(srv.URL + "/v2/g/h/blobs/sha256:abc")
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gave up after 3 attempts (last: body cut short: unexpected EOF)")
	assert.EqualValues(t, 3, srv.hits.Load())
}

// An attempt that times out, before its headers or at any point of its
// body, never hands back a short body without an error: the request is
// retried or the body resumed to its end, or reading it fails. The stall
// timer is fired by hand (see stallTimers), at a point the test chooses.
func TestTimeoutNeverShortensABody(t *testing.T) {
	digest := http.Header{"Docker-Content-Digest": {"sha256:abc"}}
	// stall sends headers h and the first sent bytes of the blob (with its
	// Content-Length unless chunked), then waits for the client to give up.
	stall := func(w http.ResponseWriter, r *http.Request, h http.Header, sent int, chunked bool) {
		for k, v := range h {
			w.Header()[k] = v
		}
		if !chunked {
			w.Header().Set("Content-Length", fmt.Sprint(len(blob)))
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, blob[:sent])
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
	resumeFrom := func(t *testing.T, w http.ResponseWriter, r *http.Request, start int) {
		assert.Equal(t, fmt.Sprintf("bytes=%d-%d", start, len(blob)-1), r.Header.Get("Range"))
		w.Header().Set("Docker-Content-Digest", "sha256:abc")
		serveRange(w, r, blob)
	}
	// stallThenResume sends sent bytes and stalls, then serves the rest.
	stallThenResume := func(sent int) func(*testing.T, *fixture, http.ResponseWriter, *http.Request, int) {
		return func(t *testing.T, _ *fixture, w http.ResponseWriter, r *http.Request, n int) {
			if n == 0 {
				stall(w, r, digest, sent, false)
				return
			}
			resumeFrom(t, w, r, sent)
		}
	}
	tests := []struct {
		name string
		// handle answers attempt n; the server fires the timer itself
		// when the client must time out before any headers.
		handle func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int)
		// readFirst is how many bytes the client reads before it fires
		// the timer; -1: it does not.
		readFirst int
		retries   int
		wantErr   string
		stats     map[string]int
	}{
		{name: "before the headers", readFirst: -1, stats: map[string]int{"timeout": 1},
			handle: func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					f.timers.fire(t)
					<-r.Context().Done()
					return
				}
				w.Header().Set("Docker-Content-Digest", "sha256:abc")
				_, _ = io.WriteString(w, blob)
			}},
		{name: "after the headers, before the body", readFirst: 0, stats: map[string]int{"body cut short: timeout": 1},
			handle: stallThenResume(0)},
		{name: "in the middle of the body", readFirst: 10, stats: map[string]int{"body cut short: timeout": 1},
			handle: stallThenResume(10)},
		{name: "the resume times out too", readFirst: 10, stats: map[string]int{"body cut short: timeout": 2},
			handle: func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int) {
				switch n {
				case 0:
					stall(w, r, digest, 10, false)
				case 1:
					f.timers.fire(t)
					<-r.Context().Done()
				default:
					resumeFrom(t, w, r, 10)
				}
			}},
		{name: "retries spent", readFirst: 10, retries: 1, stats: map[string]int{"body cut short: timeout": 1},
			wantErr: "gave up after 2 attempts (last: body cut short: timeout): body cut short after 10 of 36 bytes: no progress for 1m0s (per-attempt timeout)",
			handle: func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					stall(w, r, digest, 10, false)
					return
				}
				f.timers.fire(t)
				<-r.Context().Done()
			}},
		{name: "nothing names the content: not resumed", readFirst: 10, stats: map[string]int{},
			wantErr: "no progress for 1m0s (per-attempt timeout)",
			handle: func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int) {
				stall(w, r, nil, 10, false)
			}},
		{name: "no Content-Length: not resumed", readFirst: 10, stats: map[string]int{},
			wantErr: "no progress for 1m0s (per-attempt timeout)",
			handle: func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int) {
				stall(w, r, digest, 10, true)
			}},
		{name: "a body that ends when the connection closes: not resumed", readFirst: 10, stats: map[string]int{},
			wantErr: "no progress for 1m0s (per-attempt timeout)",
			handle: func(t *testing.T, f *fixture, w http.ResponseWriter, r *http.Request, n int) {
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return
				}
				defer conn.Close()
				fmt.Fprintf(buf, "HTTP/1.0 200 OK\r\nDocker-Content-Digest: sha256:abc\r\n\r\n%s", blob[:10])
				_ = buf.Flush()
				<-r.Context().Done()
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil, func(o *Options) {
				o.Timeout = time.Minute
				if tt.retries > 0 {
					o.Retries = tt.retries
				}
			})
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.handle(t, f, w, r, n) })
			resp, err := f.client().Get(srv.URL + "/v2/g/h/blobs/sha256:abc")
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			got := make([]byte, max(tt.readFirst, 0))
			if tt.readFirst >= 0 {
				_, err := io.ReadFull(resp.Body, got)
				require.NoError(t, err)
				f.timers.fire(t)
			}
			rest, err := io.ReadAll(resp.Body)
			got = append(got, rest...)
			if tt.wantErr != "" {
				require.Error(t, err, "a body of %d bytes", len(got))
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.True(t, strings.HasPrefix(blob, string(got)))
			} else {
				require.NoError(t, err)
				assert.Equal(t, blob, string(got))
			}
			assert.Equal(t, tt.stats, nonNil(f.rt.Stats().Retries))
		})
	}
}

func nonNil(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func TestParseContentRange(t *testing.T) {
	tests := []struct {
		in                string
		start, end, total int64
		ok                bool
	}{
		{"bytes 0-9/10", 0, 9, 10, true},
		{"bytes 5-9/*", 5, 9, -1, true},
		{"bytes 9-5/10", 0, 0, 0, false},
		{"bytes -1-5/10", 0, 0, 0, false},
		{"items 0-9/10", 0, 0, 0, false},
		{"bytes 0-9", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, e, tot, err := parseContentRange(tt.in)
			if !tt.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []int64{tt.start, tt.end, tt.total}, []int64{s, e, tot})
		})
	}
}

func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-9/10", "bytes 5-9/*", "bytes 9-5/10", "bytes 1-2/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start, end, total, err := parseContentRange(s)
		if err != nil {
			return
		}
		if start < 0 || end < start || total < -1 {
			t.Fatalf("%q parsed to %d-%d/%d", s, start, end, total)
		}
		if !strings.HasPrefix(s, "bytes ") {
			t.Fatalf("%q accepted without the bytes unit", s)
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999", ""} {
		f.Add(s)
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		resp := &http.Response{Header: http.Header{"Retry-After": {s}}}
		d, ok := retryAfter(resp, now)
		if ok && (d < 0 || d > 24*time.Hour) {
			t.Fatalf("%q: wait %s", s, d)
		}
	})
}

// An error response whose body is cut short is sent again, not reported
// as "unexpected EOF" instead of its status.
func TestErrorBodyCutShortIsRetried(t *testing.T) {
	const notFound = `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(buf, "HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s", len(notFound), notFound[:10])
			_ = buf.Flush()
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, notFound)
	})
	f := newFixture(t, http.DefaultTransport, nil)
	resp, err := f.client().Get(s.URL + "/v2/x/manifests/sha256-1.sig")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, notFound, string(b))
	assert.Equal(t, int32(2), s.hits.Load())

	// Without retries the cut is the error.
	s.hits.Store(0)
	f = newFixture(t, http.DefaultTransport, func(o *Options) { o.Retries = 0 })
	_, err = f.client().Get(s.URL + "/v2/x/manifests/sha256-1.sig")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
