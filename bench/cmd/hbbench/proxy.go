package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// countingProxy forwards everything to the registry and counts the requests,
// the request body bytes of blob uploads (POST/PATCH/PUT under
// /blobs/uploads/) and of manifest PUTs, so a benchmark can show what a push
// really asked of the registry.
type countingProxy struct {
	Addr          string // 127.0.0.1:PORT
	requests      atomic.Int64
	blobBytes     atomic.Int64
	blobUploads   atomic.Int64 // completed uploads (PUT ...?digest=)
	manifestBytes atomic.Int64
	srv           *http.Server
}

// counts is a snapshot of the counters.
type counts struct {
	Requests, BlobBytes, BlobUploads, ManifestBytes int64
}

func (c counts) sub(o counts) counts {
	return counts{c.Requests - o.Requests, c.BlobBytes - o.BlobBytes, c.BlobUploads - o.BlobUploads, c.ManifestBytes - o.ManifestBytes}
}

func (p *countingProxy) snapshot() counts {
	return counts{p.requests.Load(), p.blobBytes.Load(), p.blobUploads.Load(), p.manifestBytes.Load()}
}

// startProxy listens on 127.0.0.1:0 and forwards to target (host:port). The
// Host header is kept, so the registry's upload locations point back at
// the proxy. With log set, every request is written to it as one line
// (method, path, status), for finding where a push's requests go. With
// delay > 0, every request waits that long before it is forwarded, as a
// round trip to a registry across a network would (-registry-delay); a
// request whose client goes away meanwhile is dropped, not forwarded.
func startProxy(target string, log io.Writer, delay time.Duration) (*countingProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{Addr: l.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	rp.FlushInterval = -1
	var mu sync.Mutex
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if log != nil {
			sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintf(log, "request %s %s %d\n", r.Method, r.URL.Path, sw.status)
			}()
			w = sw
		}
		switch {
		case strings.Contains(r.URL.Path, "/blobs/uploads/") && r.Method != http.MethodGet && r.Method != http.MethodDelete:
			if r.Body != nil {
				r.Body = &countingBody{r.Body, &p.blobBytes}
			}
			if r.Method == http.MethodPut || (r.Method == http.MethodPost && r.URL.Query().Get("digest") != "") {
				p.blobUploads.Add(1)
			}
		case strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodPut:
			if r.Body != nil {
				r.Body = &countingBody{r.Body, &p.manifestBytes}
			}
		}
		if !sleepCtx(r.Context(), delay) {
			return // the client is gone (or the proxy stopped)
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *countingProxy) Stop() {
	if p != nil && p.srv != nil {
		_ = p.srv.Close()
	}
}

// sleepCtx waits d, or less if ctx ends first; it reports whether the
// whole d passed (at once for d <= 0). Its timer is stopped either way.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// statusWriter remembers the status code written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.n.Add(int64(n))
	return n, err
}
