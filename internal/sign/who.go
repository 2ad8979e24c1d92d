package sign

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
)

// Who names a signer as verifiers and policies name it.
type Who struct {
	// Key is a key-based signer's public key fingerprint: sha256:<hex>
	// of its PKIX DER form.
	Key string `json:"key,omitempty"`
	// Identity and Issuer are a keyless signer's: the certificate's
	// subject alternative name (for a GitLab job,
	// https://gitlab.com/GROUP/PROJECT//.gitlab-ci.yml@refs/tags/vX.Y.Z)
	// and OIDC issuer, what verify --certificate-identity and
	// --certificate-oidc-issuer take. Before Fulcio answered, the token's
	// subject and issuer.
	Identity string `json:"identity,omitempty"`
	Issuer   string `json:"issuer,omitempty"`
}

// String is who as one line: "key sha256:…" or "IDENTITY (ISSUER)".
func (w Who) String() string {
	if w.Key != "" {
		return "key " + w.Key
	}
	return w.Identity + " (" + w.Issuer + ")"
}

// Who names the signer: a key's fingerprint, or the identity and issuer
// of the certificate Fulcio issued (the token's until then).
func (s *Signer) Who() Who {
	if !s.Keyless() {
		der, err := x509.MarshalPKIXPublicKey(s.key.GetPublicKey())
		if err != nil {
			return Who{Key: "unknown"}
		}
		sum := sha256.Sum256(der)
		return Who{Key: "sha256:" + hex.EncodeToString(sum[:])}
	}
	if c := s.certificate(); c != nil {
		if sum, err := certificate.SummarizeCertificate(c); err == nil && sum.SubjectAlternativeName != "" {
			return Who{Identity: sum.SubjectAlternativeName, Issuer: sum.Extensions.Issuer}
		}
	}
	return Who{Identity: s.claims.identity(), Issuer: s.claims.Issuer}
}

// certificate is the Fulcio certificate once issued; nil before.
func (s *Signer) certificate() *x509.Certificate {
	s.certMu.Lock()
	der := s.certDER
	s.certMu.Unlock()
	if der == nil {
		return nil
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil
	}
	return c
}
