package imageref

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Options says how to reach registries and where to unpack archives.
type Options struct {
	// Keychain supplies credentials; nil means anonymous.
	Keychain authn.Keychain
	// Transport is the base HTTP transport; nil means remote.DefaultTransport.
	Transport http.RoundTripper
	// Insecure lists hosts (HOST or HOST:PORT) for which plain HTTP or an
	// unverified TLS certificate is allowed. Every other host is verified.
	Insecure []string
	// TempDir is where oci-archive files are unpacked for reading.
	TempDir string
	// Blobs, if set, is the run's blob store: the layers of every artifact
	// Read returns read through it, so each blob is fetched once per run and
	// concurrent readers only see complete, checked files. Nil reads every
	// layer from its source each time.
	Blobs *Blobs
	// UserAgent is sent to registries.
	UserAgent string
	// Jobs bounds concurrent blob transfers per image; 0 means ggcr's default.
	Jobs int
	// Remote are further go-containerregistry options, appended last (e.g.
	// internal/retry's Transport.RemoteOptions()).
	Remote []remote.Option
}

// RemoteOptions returns the go-containerregistry options for ctx.
func (o Options) RemoteOptions(ctx context.Context) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(o.HTTPTransport()),
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
func (o Options) HTTPTransport() http.RoundTripper {
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
	if IsInsecure(req.URL.Host, p.insecure) {
		return p.unverified.RoundTrip(req)
	}
	return p.verified.RoundTrip(req)
}
