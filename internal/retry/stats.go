package retry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Stats counts what a Transport did, for a summary at the end of a run.
type Stats struct {
	// Retries counts retries by reason ("status 503", "connection reset",
	// "timeout", "body cut short: unexpected EOF", "blob upload restarted:
	// status 502", ...).
	Retries map[string]int
	// GaveUp counts requests that still failed transiently when their
	// retries were used up.
	GaveUp int
	// Hosts are the hosts (HOST[:PORT], as in the URL) requests went to,
	// sorted.
	Hosts []string
	// PerHost are the retries of each host that had any.
	PerHost map[string]HostRetries
	// Waited is the time spent waiting before retries (backoff and
	// Retry-After), summed over requests that may have waited at once.
	Waited time.Duration
	// Challenges counts 401 answers (the layer above renews its token and
	// sends the request again); Resent counts the requests sent again with a
	// fresh copy of their body; Checked counts the token checks made before
	// a blob's data whose token was about to expire.
	Challenges, Resent, Checked int
}

// HostRetries are one host's retries: how many, and the reason of the last.
type HostRetries struct {
	Retries int
	Last    string
}

// Total is the number of retries of every reason.
func (s Stats) Total() int {
	n := 0
	for _, v := range s.Retries {
		n += v
	}
	return n
}

// String summarises s on one line: "3 retries (2 status 503, 1 timeout)".
func (s Stats) String() string {
	if s.Total() == 0 && s.GaveUp == 0 {
		return "no retries"
	}
	reasons := slices.Sorted(maps.Keys(s.Retries))
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", s.Retries[r], r))
	}
	out := fmt.Sprintf("%d retries (%s)", s.Total(), strings.Join(parts, ", "))
	if s.Total() == 0 {
		out = "no retries"
	}
	if s.GaveUp > 0 {
		out += fmt.Sprintf(", %d requests failed after their last retry", s.GaveUp)
	}
	return out
}

// counters is the mutable side of Stats.
type counters struct {
	mu      sync.Mutex
	retries map[string]int
	gaveUp  int
	hosts   map[string]bool
	perHost map[string]HostRetries
	wait    time.Duration
	// challenges, resent, checked: see Stats.
	challenges, resent, checked int
}

func (c *counters) waited(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wait += d
}

func (c *counters) challengedOnce() { c.add(&c.challenges) }
func (c *counters) resentOnce()     { c.add(&c.resent) }
func (c *counters) checkedOnce()    { c.add(&c.checked) }

func (c *counters) add(n *int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*n++
}

func (c *counters) sent(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hosts == nil {
		c.hosts = map[string]bool{}
	}
	c.hosts[host] = true
}

func (c *counters) retry(host, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retries == nil {
		c.retries, c.perHost = map[string]int{}, map[string]HostRetries{}
	}
	c.retries[reason]++
	c.perHost[host] = HostRetries{Retries: c.perHost[host].Retries + 1, Last: reason}
}

func (c *counters) gaveUpOnce() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gaveUp++
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Retries: maps.Clone(c.retries), GaveUp: c.gaveUp, Hosts: slices.Sorted(maps.Keys(c.hosts)), PerHost: maps.Clone(c.perHost),
		Waited: c.wait, Challenges: c.challenges, Resent: c.resent, Checked: c.checked,
	}
}
