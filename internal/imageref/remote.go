package imageref

import (
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Options says how to reach registries and where to unpack archives. It
// is data: internal/registry builds the transport and the
// go-containerregistry options from it (registry.RemoteOptions,
// registry.HTTPTransport) and does the registry I/O; this package reads
// layouts and archives with TempDir and Blobs.
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
	// concurrent readers only see complete, checked files; a kept store
	// (KeepBlobs) also holds a registry index's manifests and configs for
	// later runs (see registry.Read). Nil reads every layer from its
	// source each time.
	Blobs *Blobs
	// UserAgent is sent to registries.
	UserAgent string
	// Jobs bounds concurrent blob transfers per image; 0 means ggcr's default.
	Jobs int
	// Remote are further go-containerregistry options, appended last (e.g.
	// internal/retry's Transport.RemoteOptions()).
	Remote []remote.Option
}
