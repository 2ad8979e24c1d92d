package faultproxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
)

// countingReader counts the bytes read from a request body.
type countingReader struct {
	r io.ReadCloser
	n atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// hopHeaders are not forwarded (RFC 9110 section 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends r to the target. The Host header is kept, so the target
// builds its Location URLs back to the proxy.
func (p *Proxy) forward(r *http.Request) (*http.Response, error) {
	u := *p.target
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), r.Body)
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	out.Host = r.Host
	out.ContentLength = r.ContentLength
	if !hasBody(r) {
		out.Body = http.NoBody
	}
	resp, err := p.upstream.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, p.target.Scheme+"://"+p.target.Host) {
		resp.Header.Set("Location", "http://"+r.Host+strings.TrimPrefix(loc, p.target.Scheme+"://"+p.target.Host))
	}
	return resp, nil
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	if resp.ContentLength >= 0 {
		w.Header().Set("Content-Length", fmt.Sprint(resp.ContentLength))
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// writeError answers like a registry does.
func writeError(w http.ResponseWriter, code int, h http.Header) {
	for k, v := range h {
		w.Header()[k] = v
	}
	name := "UNAVAILABLE"
	if code == http.StatusTooManyRequests {
		name = "TOOMANYREQUESTS"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"errors":[{"code":"%s","message":"faultproxy: injected %d"}]}`+"\n", name, code)
}

// resetUpload reads part of the request body, then resets the connection.
func resetUpload(w http.ResponseWriter, r *http.Request) {
	part := int64(32 << 10)
	if r.ContentLength > 0 {
		part = min(part, r.ContentLength/2)
	}
	_, _ = io.CopyN(io.Discard, r.Body, part)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	rst(conn)
}

// breakResponse writes the status, the headers with the full Content-Length
// and half the body, then resets (reset) or closes the connection. A
// response without a body is not answered at all.
func breakResponse(w http.ResponseWriter, resp *http.Response, reset bool) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if resp.ContentLength > 0 {
		fmt.Fprintf(buf, "HTTP/1.1 %s\r\n", resp.Status)
		resp.Header.Set("Content-Length", fmt.Sprint(resp.ContentLength))
		_ = resp.Header.Write(buf)
		_, _ = buf.WriteString("\r\n")
		_, _ = io.CopyN(buf, resp.Body, resp.ContentLength/2)
		_ = buf.Flush()
	}
	if reset {
		rst(conn)
		return
	}
	_ = conn.Close()
}

// rst closes conn with a TCP reset.
func rst(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
