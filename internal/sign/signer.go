package sign

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	intotov1 "github.com/in-toto/attestation/go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// Options configures New. Exactly one of Key and IDToken is set.
type Options struct {
	// Key signs (LoadKey): the key-based mode.
	Key sgsign.Keypair
	// IDToken is an OIDC token (a GitLab job's id_tokens, aud sigstore):
	// the keyless mode, an ephemeral key certified by FulcioURL.
	IDToken string
	// FulcioURL is the certificate authority, e.g. https://fulcio.sigstore.dev.
	FulcioURL string
	// RekorURL, if set, is the transparency log every signature is
	// entered in (Rekor v1 API); "" signs without one (--sign-tlog none).
	RekorURL string
	// Transport reaches Fulcio and Rekor; it does the retrying (nil:
	// http.DefaultTransport, no retries).
	Transport http.RoundTripper
	// Now is the clock the token's expiry is checked against; nil: time.Now.
	Now func() time.Time
}

// Signer signs manifest digests with one key for a whole run.
type Signer struct {
	opts  Options
	key   sgsign.Keypair
	rekor sgsign.RekorClient // nil without a transparency log

	certOnce sync.Once
	cert     []byte // keyless: the Fulcio certificate (DER), fetched once
	certErr  error
	claims   tokenClaims // keyless: the token's

	certMu  sync.Mutex
	certDER []byte // cert once issued, for Who (read while certOnce may run)
}

// New checks opts and returns a Signer. Keyless, it checks the token's
// expiry and makes the ephemeral key; the certificate is asked for at the
// first signature.
func New(opts Options) (*Signer, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	var rekor sgsign.RekorClient
	if opts.RekorURL != "" {
		var err error
		if rekor, err = rekorEntries(opts.RekorURL, opts.Transport); err != nil {
			return nil, err
		}
	}
	switch {
	case opts.Key != nil && opts.IDToken != "":
		return nil, errors.New("both a key and an OIDC token: sign with one")
	case opts.Key != nil:
		if _, err := opts.Key.GetPublicKeyPem(); err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		return &Signer{opts: opts, key: opts.Key, rekor: rekor}, nil
	case opts.IDToken == "":
		return nil, errors.New("no key and no OIDC token to sign with")
	}
	if opts.FulcioURL == "" {
		return nil, errors.New("keyless signing needs a Fulcio URL")
	}
	claims, err := parseToken(opts.IDToken)
	if err != nil {
		return nil, err
	}
	if err := claims.usableAt(opts.Now()); err != nil {
		return nil, err
	}
	key, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	return &Signer{opts: opts, key: key, claims: claims, rekor: rekor}, nil
}

// Identity names who signs, as one line (Who.String).
func (s *Signer) Identity() string { return s.Who().String() }

// Keyless reports whether the signatures carry a Fulcio certificate.
func (s *Signer) Keyless() bool { return s.opts.IDToken != "" }

// PublicKeyPEM is the signing key's public half.
func (s *Signer) PublicKeyPEM() (string, error) { return s.key.GetPublicKeyPem() }

// CosignPredicate is the predicate type of cosign's image signature
// statement (cosign's types.CosignSignPredicateType).
const CosignPredicate = "https://sigstore.dev/cosign/sign/v1"

// Bundle signs subject as cosign sign does in its bundle format: a DSSE
// envelope of an in-toto statement whose subject is subject's digest,
// predicate CosignPredicate with an empty predicate, in a Sigstore bundle
// v0.3 (JSON).
func (s *Signer) Bundle(ctx context.Context, subject v1.Hash) ([]byte, error) {
	statement, err := statementFor(subject)
	if err != nil {
		return nil, err
	}
	b, err := s.bundle(ctx, &sgsign.DSSEData{Data: statement, PayloadType: "application/vnd.in-toto+json"})
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", subject, err)
	}
	return protojson.Marshal(b)
}

// statementFor is cosign's statement about an image digest.
func statementFor(subject v1.Hash) ([]byte, error) {
	if _, err := hex.DecodeString(subject.Hex); err != nil || subject.Algorithm == "" {
		return nil, fmt.Errorf("subject %q is not a digest", subject)
	}
	st := &intotov1.Statement{
		Type:          intotov1.StatementTypeUri,
		Subject:       []*intotov1.ResourceDescriptor{{Digest: map[string]string{subject.Algorithm: subject.Hex}}},
		PredicateType: CosignPredicate,
		Predicate:     &structpb.Struct{},
	}
	return protojson.Marshal(st)
}

// Legacy is a signature in cosign's legacy format: the simple-signing
// payload naming the image and its digest, the base64 signature over it,
// and, keyless, the certificate (PEM).
type Legacy struct {
	Payload   []byte
	Signature []byte // raw; base64 in the layer's annotation
	CertPEM   []byte
	ChainPEM  []byte
	// RekorBundle is the transparency log's entry of the signature, as
	// cosign's AnnotationRekorBundle; "" without a log.
	RekorBundle string
}

// Legacy signs the manifest digest of image (a repository) as cosign sign
// --new-bundle-format=false does.
func (s *Signer) Legacy(ctx context.Context, image string, subject v1.Hash) (Legacy, error) {
	p, err := legacyPayload(image, subject)
	if err != nil {
		return Legacy{}, err
	}
	b, err := s.bundle(ctx, &sgsign.PlainData{Data: p})
	if err != nil {
		return Legacy{}, fmt.Errorf("sign %s@%s: %w", image, subject, err)
	}
	out := Legacy{Payload: p, Signature: b.GetMessageSignature().GetSignature()}
	if es := b.GetVerificationMaterial().GetTlogEntries(); len(es) > 0 {
		if out.RekorBundle, err = rekorAnnotation(es[0]); err != nil {
			return Legacy{}, fmt.Errorf("sign %s@%s: %w", image, subject, err)
		}
	}
	if c := b.GetVerificationMaterial().GetCertificate(); c != nil {
		out.CertPEM = derToPEM(c.GetRawBytes())
	}
	return out, nil
}

// legacyPayload is sigstore's simple-signing payload for image@subject.
func legacyPayload(image string, subject v1.Hash) ([]byte, error) {
	d, err := parseDigest(image, subject)
	if err != nil {
		return nil, err
	}
	return (&payload.Cosign{Image: d}).MarshalJSON()
}

// bundle signs content with the run's key, through sigstore-go: keyless
// with the run's Fulcio certificate, with a Rekor entry when configured.
func (s *Signer) bundle(ctx context.Context, content sgsign.Content) (*protobundle.Bundle, error) {
	opts := sgsign.BundleOptions{Context: ctx}
	if s.Keyless() {
		opts.CertificateProvider = s
		opts.CertificateProviderOptions = &sgsign.CertificateProviderOptions{IDToken: s.opts.IDToken}
	}
	if s.opts.RekorURL != "" {
		opts.TransparencyLogs = []sgsign.Transparency{sgsign.NewRekor(&sgsign.RekorOptions{BaseURL: s.opts.RekorURL, Client: s.rekor})}
	}
	return sgsign.Bundle(content, s.key, opts)
}

// GetCertificate asks Fulcio once per run; every signature carries the
// same certificate (sigstore-go's CertificateProvider).
func (s *Signer) GetCertificate(ctx context.Context, key sgsign.Keypair, opts *sgsign.CertificateProviderOptions) ([]byte, error) {
	s.certOnce.Do(func() {
		f := sgsign.NewFulcio(&sgsign.FulcioOptions{BaseURL: s.opts.FulcioURL, Transport: failUnavailable{s.opts.Transport}, Retries: 0})
		s.cert, s.certErr = f.GetCertificate(ctx, key, opts)
		if s.certErr != nil {
			s.certErr = fmt.Errorf("certificate from %s: %w", s.opts.FulcioURL, s.certErr)
			return
		}
		s.certMu.Lock()
		s.certDER = s.cert
		s.certMu.Unlock()
	})
	return s.cert, s.certErr
}
