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

// AppendLegacy signs subject in cosign's legacy format onto base.
func (a *Signer) AppendLegacy(ctx context.Context, repo name.Repository, subject v1.Hash, base v1.Image) (v1.Image, error) {
	l, err := a.s.Legacy(ctx, repo.Name(), subject)
	if err != nil {
		return nil, err
	}
	return sign.AppendLegacy(base, l)
}

// Identity names the signer (see sign.Signer.Identity).
func (a *Signer) Identity() string { return a.s.Identity() }

// Bundles are the bundles made so far, in order.
func (a *Signer) Bundles() []SignedBundle {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]SignedBundle(nil), a.bundles...)
}
