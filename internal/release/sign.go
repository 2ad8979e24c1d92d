package release

import (
	"context"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/sign"
)

// Signer is publish's Signer over a sign.Signer: Sigstore bundles wrapped
// as referrers, legacy signatures added to cosign's .sig images. It keeps
// every bundle it made, for --attest-dir.
type Signer struct {
	s   *sign.Signer
	now func() time.Time

	mu      sync.Mutex
	bundles []SignedBundle
	// legacy are the legacy signatures LegacyReferrer made, by repository
	// and subject: the .sig tag written beside one carries the same.
	legacy map[string]sign.Legacy
}

// SignedBundle is one bundle a Signer made: the signed digest, in which
// repository, and the bundle's JSON.
type SignedBundle struct {
	Repository string
	Subject    v1.Hash
	JSON       []byte
}

var _ publish.Signer = (*Signer)(nil)

// NewSigner adapts s; now stamps the referrers' creation annotation (nil: time.Now).
func NewSigner(s *sign.Signer, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{s: s, now: now}
}

// Referrer signs subject as a bundle and wraps it as its referrer.
func (a *Signer) Referrer(ctx context.Context, repo name.Repository, subject v1.Descriptor) (publish.Referrer, error) {
	b, err := a.s.Bundle(ctx, subject.Digest)
	if err != nil {
		return publish.Referrer{}, err
	}
	r, err := sign.BundleReferrer(subject, b, a.now())
	if err != nil {
		return publish.Referrer{}, err
	}
	a.mu.Lock()
	a.bundles = append(a.bundles, SignedBundle{Repository: repo.String(), Subject: subject.Digest, JSON: b})
	a.mu.Unlock()
	return publish.Referrer{Subject: subject.Digest, Manifest: r.Image, Entry: r.Entry}, nil
}

// AppendLegacy signs subject in cosign's legacy format onto base (with
// the signature LegacyReferrer made of it, if any).
func (a *Signer) AppendLegacy(ctx context.Context, repo name.Repository, subject v1.Hash, base v1.Image) (v1.Image, error) {
	a.mu.Lock()
	l, ok := a.legacy[repo.String()+"@"+subject.String()]
	a.mu.Unlock()
	if !ok {
		var err error
		if l, err = a.s.Legacy(ctx, repo.Name(), subject); err != nil {
			return nil, err
		}
	}
	return sign.AppendLegacy(base, l)
}

// LegacyReferrer signs subject in cosign's legacy format as its OCI 1.1
// referrer.
func (a *Signer) LegacyReferrer(ctx context.Context, repo name.Repository, subject v1.Descriptor) (publish.Referrer, error) {
	l, err := a.s.Legacy(ctx, repo.Name(), subject.Digest)
	if err != nil {
		return publish.Referrer{}, err
	}
	r, err := sign.LegacyReferrer(subject, l)
	if err != nil {
		return publish.Referrer{}, err
	}
	a.mu.Lock()
	if a.legacy == nil {
		a.legacy = map[string]sign.Legacy{}
	}
	a.legacy[repo.String()+"@"+subject.Digest.String()] = l
	a.mu.Unlock()
	return publish.Referrer{Subject: subject.Digest, Manifest: r.Image, Entry: r.Entry}, nil
}

// Identity names the signer (see sign.Signer.Identity).
func (a *Signer) Identity() string { return a.s.Identity() }

// who names the signer for the outputs; nil for a nil Signer (unsigned).
func (a *Signer) who() *sign.Who {
	if a == nil {
		return nil
	}
	w := a.s.Who()
	return &w
}

// Bundles are the bundles made so far, in order.
func (a *Signer) Bundles() []SignedBundle {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]SignedBundle(nil), a.bundles...)
}
