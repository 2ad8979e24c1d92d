package faultproxy

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Options configures a Proxy.
type Options struct {
	// Target is the loopback server to forward to: http://127.0.0.1:PORT.
	Target string
	// Seed fixes the schedule.
	Seed int64
	// Rate is the fraction of eligible requests faulted, in [0, 1].
	Rate float64
	// Faults are the kinds to choose from, per request; empty: AllFaults.
	Faults []Fault
	// Persistent faults every eligible request, forever (Rate and MaxPerKey
	// are ignored).
	Persistent bool
	// Match selects the eligible requests; nil: every request.
	Match func(*http.Request) bool
	// MaxPerKey bounds the faults one request key gets (transient faults);
	// 0 means 2.
	MaxPerKey int
	// Delay is how long Slow waits; 0 means one hour (a client without a
	// per-attempt timeout hangs, as it would on a real stalled server).
	Delay time.Duration
	// Every, when above 0, replaces the seeded schedule: every Every-th
	// eligible request (counted over all keys, in arrival order) gets the
	// first of Faults, forever (a rate limit: Every 3, Faults TooMany).
	Every int
	// Intercept, when set, sees every request no fault was injected into
	// before it is forwarded; true means it answered the request itself
	// (tokenauth's expiry gate answers 401 so).
	Intercept func(http.ResponseWriter, *http.Request) bool
}

// Injection is one fault the proxy injected.
type Injection struct {
	Key     string // "PATCH /v2/g/h/blobs/uploads/*"
	Attempt int    // how many requests with Key came before
	Fault   Fault
	Status  int // for Status5xx
}

// Stats counts what a Proxy saw and did.
type Stats struct {
	Requests int
	Faults   map[Fault]int
	Injected []Injection // in the order injected
	// Statuses counts the target's answers by status (injected faults are
	// not answers of the target).
	Statuses map[int]int
	// Uploaded sums the request body bytes the target read from requests
	// it answered with a 2xx: bytes that reached it and were accepted.
	Uploaded int64
	// Intercepted counts the requests Options.Intercept answered.
	Intercepted int
}

// Proxy is a running fault-injecting reverse proxy.
type Proxy struct {
	opts     Options
	target   *url.URL
	listener net.Listener
	server   *http.Server
	upstream *http.Transport

	mu       sync.Mutex
	attempts map[string]int // requests seen per key
	faulted  map[string]int // faults injected per key
	eligible int            // eligible requests seen (Every)
	stats    Stats
}

// Start listens on 127.0.0.1:0 and serves until Close.
func Start(opts Options) (*Proxy, error) {
	target, err := url.Parse(opts.Target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", opts.Target, err)
	}
	if target.Scheme != "http" || !isLoopback(target.Hostname()) {
		return nil, fmt.Errorf("target %q: want http://127.0.0.1:PORT (loopback only)", opts.Target)
	}
	if opts.Every < 0 {
		return nil, fmt.Errorf("every %d: want 0 (seeded schedule) or more", opts.Every)
	}
	if opts.Rate < 0 || opts.Rate > 1 {
		return nil, fmt.Errorf("rate %v: want a fraction in [0, 1]", opts.Rate)
	}
	if len(opts.Faults) == 0 {
		opts.Faults = AllFaults
	}
	if opts.MaxPerKey == 0 {
		opts.MaxPerKey = 2
	}
	if opts.Delay == 0 {
		opts.Delay = time.Hour
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		opts:     opts,
		target:   target,
		listener: l,
		upstream: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 16},
		attempts: map[string]int{},
		faulted:  map[string]int{},
		stats:    Stats{Faults: map[Fault]int{}, Statuses: map[int]int{}},
	}
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the proxy's base URL, http://127.0.0.1:PORT.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Addr is the proxy's host:port, for image references.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() {
	_ = p.server.Close()
	p.upstream.CloseIdleConnections()
}

// Stats returns a snapshot of the requests seen and the faults injected.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Faults = make(map[Fault]int, len(p.stats.Faults))
	for k, v := range p.stats.Faults {
		s.Faults[k] = v
	}
	s.Statuses = make(map[int]int, len(p.stats.Statuses))
	for k, v := range p.stats.Statuses {
		s.Statuses[k] = v
	}
	s.Injected = slices.Clone(p.stats.Injected)
	return s
}

// decide records r and returns the fault to inject into it (and the status,
// for Status5xx).
func (p *Proxy) decide(r *http.Request) (Fault, int) {
	key := requestKey(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.attempts[key]
	p.attempts[key]++
	p.stats.Requests++
	var f Fault
	var status int
	if p.opts.Every > 0 {
		f, status = p.everyNth(r)
	} else {
		f, status = p.opts.choose(r, key, n, p.faulted[key])
	}
	if f != Status5xx {
		status = 0
	}
	if f != None {
		p.faulted[key]++
		p.stats.Faults[f]++
		p.stats.Injected = append(p.stats.Injected, Injection{Key: key, Attempt: n, Fault: f, Status: status})
	}
	return f, status
}

// everyNth is the schedule of Options.Every; p.mu is held.
func (p *Proxy) everyNth(r *http.Request) (Fault, int) {
	f := p.opts.Faults[0]
	if (p.opts.Match != nil && !p.opts.Match(r)) || !f.applies(r) {
		return None, 0
	}
	p.eligible++
	if p.eligible%p.opts.Every != 0 {
		return None, 0
	}
	return f, statuses[0]
}

// answered records the target's answer to a request whose body it read
// body bytes of.
func (p *Proxy) answered(status int, body int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Statuses[status]++
	if status >= 200 && status < 300 {
		p.stats.Uploaded += body
	}
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, status := p.decide(r)
	switch f {
	case Status5xx:
		writeError(w, status, nil)
		return
	case TooMany:
		writeError(w, http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}})
		return
	case ResetMidBody:
		if hasBody(r) {
			resetUpload(w, r)
			return
		}
	case Slow:
		t := time.NewTimer(p.opts.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if f == None && p.opts.Intercept != nil && p.opts.Intercept(w, r) {
		p.mu.Lock()
		p.stats.Intercepted++
		p.mu.Unlock()
		return
	}
	body := &countingReader{r: r.Body}
	r.Body = body
	resp, err := p.forward(r)
	if err != nil {
		writeError(w, http.StatusBadGateway, nil)
		return
	}
	defer resp.Body.Close()
	p.answered(resp.StatusCode, body.n.Load())
	switch f {
	case ResetMidBody:
		breakResponse(w, resp, true)
	case Truncate:
		breakResponse(w, resp, false)
	default:
		copyResponse(w, resp)
	}
}
