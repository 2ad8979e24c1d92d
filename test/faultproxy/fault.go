package faultproxy

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
)

// Fault is one way of breaking a request.
type Fault int

const (
	// None forwards the request untouched.
	None Fault = iota
	// Status5xx answers 500, 502, 503 or 504 without forwarding.
	Status5xx
	// TooMany answers 429 with "Retry-After: 1" without forwarding.
	TooMany
	// ResetMidBody resets the connection (TCP RST): after reading part of a
	// request body (an upload), or after forwarding and writing part of the
	// response body (a download); with neither body, after forwarding and
	// before any response (a lost response).
	ResetMidBody
	// Truncate forwards, then sends the response's Content-Length but only
	// half of its body and closes the connection; for a response without a
	// body it closes without answering. Requests with a body are not
	// truncated (ResetMidBody covers them).
	Truncate
	// Slow waits Options.Delay (or until the client gives up) before
	// forwarding.
	Slow
)

// AllFaults lists every fault but None.
var AllFaults = []Fault{Status5xx, TooMany, ResetMidBody, Truncate, Slow}

func (f Fault) String() string {
	switch f {
	case None:
		return "none"
	case Status5xx:
		return "status-5xx"
	case TooMany:
		return "too-many-requests"
	case ResetMidBody:
		return "reset-mid-body"
	case Truncate:
		return "truncate"
	case Slow:
		return "slow"
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// applies reports whether f can break r.
func (f Fault) applies(r *http.Request) bool {
	switch f {
	case Status5xx, TooMany, ResetMidBody, Slow:
		return true
	case Truncate:
		return !hasBody(r)
	}
	return false
}

func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// requestKey names r for the schedule: method and path, with an upload
// session id replaced by "*".
func requestKey(r *http.Request) string {
	p := r.URL.Path
	if i := strings.Index(p, "/blobs/uploads/"); i >= 0 && len(p) > i+len("/blobs/uploads/") {
		p = p[:i] + "/blobs/uploads/*"
	}
	return r.Method + " " + p
}

// draw returns two independent uniform numbers for (seed, key, n).
func draw(seed int64, key string, n int) (float64, uint64) {
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(n))
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(key))
	x := splitmix(h.Sum64())
	y := splitmix(x)
	return float64(x>>11) / (1 << 53), y
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// statuses are what Status5xx answers.
var statuses = []int{500, 502, 503, 504}

// choose picks the fault for the nth request with key (faulted counts the
// faults the key has had so far) and, for Status5xx, the status.
func (o *Options) choose(r *http.Request, key string, n, faulted int) (Fault, int) {
	if o.Match != nil && !o.Match(r) {
		return None, 0
	}
	u, pick := draw(o.Seed, key, n)
	if !o.Persistent && (u >= o.Rate || faulted >= o.MaxPerKey) {
		return None, 0
	}
	var usable []Fault
	for _, f := range o.Faults {
		if f.applies(r) {
			usable = append(usable, f)
		}
	}
	if len(usable) == 0 {
		return None, 0
	}
	k := uint64(len(usable))
	return usable[pick%k], statuses[(pick/k)%uint64(len(statuses))]
}
