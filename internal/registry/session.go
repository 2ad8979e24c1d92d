package registry

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Session is how a release writes to registries, on the Options it is made
// from (the run's transport stack: per-host TLS, retries, byte counting):
// go-containerregistry's pusher for blobs (mounted from another repository
// where the registry can), images and indexes by digest and tags; one
// puller for the HEADs and reads of manifests; and Raw (embedded) for the
// manifests ggcr's writers would handle differently. Each repository is
// pinged and authorised once per Session by each of the three (pusher,
// puller, Raw), however many calls, and a blob the Session has sent to a
// repository is not sent again, so one Session serves the uploads made
// while a release builds and the release itself.
//
// What Has learns of a manifest is kept for the Session's life (see
// Found): a manifest found in place while the release built is neither
// sent nor asked for again when the release is published.
//
// Errors are go-containerregistry's as they come (a *transport.Error for
// a registry's answer): the caller explains them (Explain), naming what it
// was doing.
type Session struct {
	pusher *remote.Pusher
	// reads are the options of a read: the pusher's and puller's
	// connections reused, then RemoteOptions; each read adds its context.
	reads []remote.Option
	*Raw

	mu sync.Mutex
	// found is what Has learned, by REPOSITORY@DIGEST: true, in place;
	// false, missing.
	found map[string]bool
}

// NewSession makes a Session that reaches registries as o says. Every call
// takes its own context: that is what the requests carry (the byte
// counter among them, see CarryCounter).
func NewSession(o imageref.Options) (*Session, error) {
	// One transport for ggcr's writers and readers and for Raw: with
	// insecure hosts, HTTPTransport clones the base transport, and two
	// clones would keep two connection pools to the same registry.
	t := HTTPTransport(o)
	opts := remoteOptions(context.Background(), o, t)
	pusher, err := remote.NewPusher(opts...)
	if err != nil {
		return nil, err
	}
	puller, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, err
	}
	return &Session{
		pusher: pusher,
		reads:  append([]remote.Option{remote.Reuse(pusher), remote.Reuse(puller)}, opts...),
		Raw:    NewRaw(o.Keychain, t),
		found:  map[string]bool{},
	}, nil
}

// Upload sends blob l to repo, unless the registry has it or can mount it
// from a repository it came from. A layer still being written (see
// layer.Stream) is streamed and committed under its digest once it ends.
func (s *Session) Upload(ctx context.Context, repo name.Repository, l v1.Layer) error {
	return s.pusher.Upload(ctx, repo, l)
}

// Push writes t as ref: its blobs (and an index's children) that are not
// in place, then its manifest.
func (s *Session) Push(ctx context.Context, ref name.Reference, t remote.Taggable) error {
	return s.pusher.Push(ctx, ref, t)
}

// Tag points tag at t by writing t's manifest only: what it names must be
// in place already.
func (s *Session) Tag(ctx context.Context, tag name.Tag, t remote.Taggable) error {
	return s.pusher.Put(ctx, tag, t)
}

// Put writes t's manifest as ref, without asking first whether the
// registry has it and without its blobs or children: what it names must
// be in place already.
func (s *Session) Put(ctx context.Context, ref name.Digest, t remote.Taggable) error {
	return s.pusher.Put(ctx, ref, t)
}

// Head asks the registry for ref's manifest descriptor without its body.
func (s *Session) Head(ctx context.Context, ref name.Reference) (*v1.Descriptor, error) {
	return remote.Head(ref, s.with(ctx)...)
}

// Has asks the registry (a HEAD) whether it holds the manifest ref names,
// and remembers the answer (see Found). A manifest is in place when the
// registry answers with ref's digest; a 404, or the 403 some registries
// give for a missing manifest, is not in place. Any other failure is
// returned and nothing is remembered.
func (s *Session) Has(ctx context.Context, ref name.Digest) (bool, error) {
	desc, err := s.Head(ctx, ref)
	var terr *transport.Error
	switch {
	case errors.As(err, &terr) && (terr.StatusCode == http.StatusNotFound || terr.StatusCode == http.StatusForbidden):
		s.remember(ref, false)
		return false, nil
	case err != nil:
		return false, err
	}
	in := desc.Digest.String() == ref.DigestStr()
	s.remember(ref, in)
	return in, nil
}

// Found is what Has last learned of ref in this Session: whether the
// manifest was in place, and whether Has asked at all.
func (s *Session) Found(ref name.Digest) (in, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, known = s.found[ref.String()]
	return in, known
}

func (s *Session) remember(ref name.Digest, in bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.found[ref.String()] = in
}

// Image reads the image ref names; its blobs are read when asked for,
// within ctx. A missing image is a *transport.Error with status 404.
func (s *Session) Image(ctx context.Context, ref name.Reference) (v1.Image, error) {
	return remote.Image(ref, s.with(ctx)...)
}

// with is the options of a read within ctx.
func (s *Session) with(ctx context.Context) []remote.Option {
	return append(slices.Clip(s.reads), remote.WithContext(ctx))
}
