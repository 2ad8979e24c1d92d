package sign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/retry"
)

const (
	testIssuer   = "https://gitlab.example.test"
	testIdentity = "https://gitlab.example.test/group/project//.gitlab-ci.yml@refs/tags/v1.2.3"
)

// oidcIssuer signs ID tokens as a GitLab job's id_tokens would be.
type oidcIssuer struct{ key *ecdsa.PrivateKey }

func newIssuer(t *testing.T) *oidcIssuer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return &oidcIssuer{key: k}
}

func (o *oidcIssuer) token(t *testing.T, subject string, exp time.Time) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: o.key}, nil)
	require.NoError(t, err)
	tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: testIssuer, Subject: subject, Audience: jwt.Audience{"sigstore"},
		IssuedAt: jwt.NewNumericDate(exp.Add(-time.Hour)), Expiry: jwt.NewNumericDate(exp)}).Serialize()
	require.NoError(t, err)
	return tok
}

// fulcio is a Fulcio stand-in: it checks the token against the issuer's
// key (signature, audience, expiry) and the proof of possession, and
// certifies the key for the token's subject as a URI SAN.
type fulcio struct {
	issuer      *oidcIssuer
	root, inter *x509.Certificate
	interKey    crypto.Signer
	calls       atomic.Int64
	down        bool
}

func newFulcio(t *testing.T, iss *oidcIssuer) (*fulcio, *httptest.Server) {
	rootCert, rootKey, err := ca.GenerateRootCa()
	require.NoError(t, err)
	inter, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	require.NoError(t, err)
	f := &fulcio{issuer: iss, root: rootCert, inter: inter, interKey: interKey}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fulcio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.down {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	var c jwt.Claims
	if err == nil {
		err = tok.Claims(&f.issuer.key.PublicKey, &c)
	}
	if err == nil {
		err = c.Validate(jwt.Expected{Issuer: testIssuer, AnyAudience: jwt.Audience{"sigstore"}, Time: time.Now()})
	}
	if err != nil {
		http.Error(w, "invalid token: "+err.Error(), http.StatusUnauthorized)
		return
	}
	var req struct {
		PublicKeyRequest struct {
			PublicKey struct{ Content string } `json:"publicKey"`
		} `json:"publicKeyRequest"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(req.PublicKeyRequest.PublicKey.Content))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	san, _ := url.Parse(c.Subject)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{},
		URIs: []*url.URL{san}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(10 * time.Minute),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(testIssuer)}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.inter, pub, f.interKey)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	chain := []string{string(derToPEM(der)), string(derToPEM(f.inter.Raw)), string(derToPEM(f.root.Raw))}
	_ = json.NewEncoder(w).Encode(map[string]any{"signedCertificateEmbeddedSct": map[string]any{"chain": map[string]any{"certificates": chain}}})
}

// trustedRoot is a trusted_root.json naming only this Fulcio.
func (f *fulcio) trustedRoot(t *testing.T) []byte {
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{&root.FulcioCertificateAuthority{
		Root: f.root, Intermediates: []*x509.Certificate{f.inter}, ValidityPeriodStart: time.Now().Add(-time.Hour), URI: "https://fulcio.example.test",
	}}, nil, nil, nil)
	require.NoError(t, err)
	b, err := tr.MarshalJSON()
	require.NoError(t, err)
	return b
}

func noWaitRetries(t *testing.T, n int) http.RoundTripper {
	o := retry.DefaultOptions()
	o.Retries = n
	o.Sleep = func(context.Context, time.Duration) error { return nil }
	rt, err := retry.New(http.DefaultTransport, o)
	require.NoError(t, err)
	return rt
}

func TestKeylessOffline(t *testing.T) {
	iss := newIssuer(t)
	f, srv := newFulcio(t, iss)
	s, err := New(Options{IDToken: iss.token(t, testIdentity, time.Now().Add(time.Hour)), FulcioURL: srv.URL, Transport: noWaitRetries(t, 2)})
	require.NoError(t, err)
	assert.Equal(t, testIdentity+" ("+testIssuer+")", s.Identity())
	ctx := context.Background()
	b, err := s.Bundle(ctx, subject)
	require.NoError(t, err)
	l, err := s.Legacy(ctx, "registry.example.test/group/helper", subject)
	require.NoError(t, err)
	require.NotEmpty(t, l.CertPEM)
	assert.EqualValues(t, 1, f.calls.Load(), "one certificate for the whole run")
	assert.Equal(t, Who{Identity: testIdentity, Issuer: testIssuer}, s.Who(), "the certificate's SAN and issuer extension")

	trustedRoot := f.trustedRoot(t)
	accept := []Policy{
		{Identity: testIdentity, Issuer: testIssuer},
		{IdentityRegexp: `^https://gitlab\.example\.test/group/project//\.gitlab-ci\.yml@refs/tags/v`, IssuerRegexp: `gitlab\.example\.test$`},
	}
	for _, p := range accept {
		p.TrustedRoot, p.IgnoreTlog = trustedRoot, true
		v, err := NewVerifier(p)
		require.NoError(t, err)
		assert.NoError(t, v.VerifyBundle(b, subject), "%+v", p)
		assert.NoError(t, v.VerifyLegacy(l.Payload, b64(l.Signature), string(l.CertPEM), subject), "%+v", p)
	}
	refuse := []Policy{
		{Identity: "https://gitlab.example.test/other/project//.gitlab-ci.yml@refs/tags/v1.2.3", Issuer: testIssuer},
		{Identity: testIdentity, Issuer: "https://token.actions.githubusercontent.com"},
		{IdentityRegexp: `refs/heads/main$`, Issuer: testIssuer},
	}
	for _, p := range refuse {
		p.TrustedRoot, p.IgnoreTlog = trustedRoot, true
		v, err := NewVerifier(p)
		require.NoError(t, err)
		assert.Error(t, v.VerifyBundle(b, subject), "another identity: %+v", p)
		assert.Error(t, v.VerifyLegacy(l.Payload, b64(l.Signature), string(l.CertPEM), subject), "another identity: %+v", p)
	}

	// Another CA's trusted root does not vouch for this certificate.
	other, _ := newFulcio(t, iss)
	v, err := NewVerifier(Policy{Identity: testIdentity, Issuer: testIssuer, TrustedRoot: other.trustedRoot(t), IgnoreTlog: true})
	require.NoError(t, err)
	assert.Error(t, v.VerifyBundle(b, subject))

	// Without --insecure-ignore-tlog a signature without a log entry is refused.
	v, err = NewVerifier(Policy{Identity: testIdentity, Issuer: testIssuer, TrustedRoot: trustedRoot})
	require.NoError(t, err)
	assert.Error(t, v.VerifyBundle(b, subject))
}

func TestKeylessRefusals(t *testing.T) {
	iss := newIssuer(t)
	f, srv := newFulcio(t, iss)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

	_, err := New(Options{IDToken: iss.token(t, testIdentity, now.Add(-time.Minute)), FulcioURL: srv.URL, Now: func() time.Time { return now }})
	require.ErrorContains(t, err, "expired at 2026-12-01T11:59:00Z")
	_, err = New(Options{FulcioURL: srv.URL})
	require.ErrorContains(t, err, "no key and no OIDC token")
	_, err = New(Options{IDToken: "not.a.jwt", FulcioURL: srv.URL})
	require.ErrorContains(t, err, "not a JWT")

	// A token signed by someone else: Fulcio refuses it.
	s, err := New(Options{IDToken: newIssuer(t).token(t, testIdentity, time.Now().Add(time.Hour)), FulcioURL: srv.URL})
	require.NoError(t, err)
	_, err = s.Bundle(context.Background(), subject)
	require.ErrorContains(t, err, "401")

	// Fulcio down: retried, then the error.
	f.down = true
	f.calls.Store(0)
	s, err = New(Options{IDToken: iss.token(t, testIdentity, time.Now().Add(time.Hour)), FulcioURL: srv.URL, Transport: noWaitRetries(t, 3)})
	require.NoError(t, err)
	_, err = s.Bundle(context.Background(), subject)
	require.ErrorContains(t, err, "503")
	assert.EqualValues(t, 4, f.calls.Load(), "the first attempt and three retries")
}
