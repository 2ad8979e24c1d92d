package registry

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// Retries is how a run retries transient registry failures.
type Retries struct {
	// Retries is the most retries of one request; 0 never retries.
	Retries int
	// Timeout abandons (and retries) a request that makes no progress for
	// this long; 0 never does.
	Timeout time.Duration
	// Now reads the clock (Retry-After dates, token expiry); nil: time.Now.
	// Tests inject the clock their registry's tokens expire on.
	Now func() time.Time
}

// Check says what is wrong with r, naming the flags that set it.
func (r Retries) Check() error {
	if r.Retries < 0 {
		return fmt.Errorf("--retries must be 0 or more, got %d", r.Retries)
	}
	if r.Timeout < 0 {
		return fmt.Errorf("--timeout must be 0 (none) or more, got %s", r.Timeout)
	}
	return nil
}

// WithRetries makes o's registry traffic retry transient failures. The
// retrying transport wraps o's per-host transport (so insecure hosts keep
// working), counts the bytes of each attempt as they go out (for
// progress), and tells go-containerregistry to leave retries to it; log
// gets one warning per retry.
func WithRetries(o imageref.Options, r Retries, log *slog.Logger) (imageref.Options, *retry.Transport, error) {
	ro := retry.DefaultOptions()
	ro.Retries, ro.Timeout, ro.Logger = r.Retries, r.Timeout, log
	if r.Now != nil {
		ro.Now = r.Now
	}
	// Below the retries, so the bytes of each attempt are counted as they go out.
	rt, err := retry.New(countingTransport{HTTPTransport(o)}, ro)
	if err != nil {
		return o, nil, err
	}
	o.Transport = rt
	o.Remote = append(o.Remote, rt.RemoteOptions()...)
	return o, rt, nil
}

// ReportRetries sums up the retries of a run on log: one warning per host
// that had any, with the count and the last cause (each retry is an INFO
// record of the retry logger, shown with -v), one with the time spent
// waiting before them, and an INFO record of the 401s answered with new
// credentials (an expired token is renewed by the auth layer, not retried).
func ReportRetries(log *slog.Logger, rt *retry.Transport) {
	s := rt.Stats()
	for _, h := range slices.Sorted(maps.Keys(s.PerHost)) {
		log.Warn("registry retries, every request to the host together", "host", h, "retries", s.PerHost[h].Retries, "last", s.PerHost[h].Last)
	}
	if s.Waited > 0 {
		log.Warn("waited before retrying", "total", s.Waited.Round(time.Millisecond).String())
	}
	if s.Challenges > 0 {
		log.Info("registry asked for new credentials", "401s", s.Challenges,
			"sent again with their body", s.Resent, "tokens checked before blob data", s.Checked)
	}
}

// WarnUnusedInsecure warns, on log, of each --insecure-registry value that
// matched no host rt sent a request to (the match is exact, HOST[:PORT] as
// in the URL), naming the host it probably meant: the same name with a
// port, as in registry.example.com for registry.example.com:5000.
func WarnUnusedInsecure(log *slog.Logger, rt *retry.Transport, insecure []string) {
	hosts := rt.Stats().Hosts
	if len(hosts) == 0 {
		return // nothing reached: nothing to compare with
	}
	for _, v := range insecure {
		if slices.ContainsFunc(hosts, func(h string) bool { return imageref.IsInsecure(h, []string{v}) }) {
			continue
		}
		name := strings.TrimSpace(v)
		if h, _, err := net.SplitHostPort(name); err == nil {
			name = h
		}
		var meant []string
		for _, h := range hosts {
			if hn, _, err := net.SplitHostPort(h); strings.EqualFold(hn, name) || (err != nil && strings.EqualFold(h, name)) {
				meant = append(meant, h)
			}
		}
		if len(meant) > 0 {
			log.Warn(fmt.Sprintf("--insecure-registry %s matches no registry this run reached: it reached %s; give HOST:PORT exactly, e.g. --insecure-registry %s", v, strings.Join(meant, ", "), meant[0]))
			continue
		}
		log.Warn(fmt.Sprintf("--insecure-registry %s matches no registry this run reached (%s)", v, strings.Join(hosts, ", ")))
	}
}

// RemoteOptions are the go-containerregistry options of o for ctx: the
// transport (HTTPTransport), keychain, user agent, jobs, then o.Remote.
func RemoteOptions(ctx context.Context, o imageref.Options) []remote.Option {
	return remoteOptions(ctx, o, HTTPTransport(o))
}

// remoteOptions is RemoteOptions on transport t, made from o by
// HTTPTransport.
func remoteOptions(ctx context.Context, o imageref.Options, t http.RoundTripper) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(t),
	}
	if o.Keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(o.Keychain))
	}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	if o.Jobs > 0 {
		opts = append(opts, remote.WithJobs(o.Jobs))
	}
	return append(opts, o.Remote...)
}

// HTTPTransport is the transport registries are reached with: the base
// transport, with certificate checks skipped only for insecure hosts.
func HTTPTransport(o imageref.Options) http.RoundTripper {
	base := o.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	if len(o.Insecure) == 0 {
		return base
	}
	t, ok := base.(*http.Transport)
	if !ok {
		return base
	}
	unverified := t.Clone()
	if unverified.TLSClientConfig == nil {
		unverified.TLSClientConfig = &tls.Config{}
	}
	unverified.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // only for hosts the user named with --insecure-registry
	return &perHost{verified: base, unverified: unverified, insecure: o.Insecure}
}

// perHost skips certificate verification only for the hosts the user named.
type perHost struct {
	verified, unverified http.RoundTripper
	insecure             []string
}

func (p *perHost) RoundTrip(req *http.Request) (*http.Response, error) {
	if imageref.IsInsecure(req.URL.Host, p.insecure) {
		return p.unverified.RoundTrip(req)
	}
	return p.verified.RoundTrip(req)
}
