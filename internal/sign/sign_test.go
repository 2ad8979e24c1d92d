package sign

import (
	"context"
	"crypto/elliptic"
	"errors"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

var subject = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}

// cosignKey is a cosign key pair as cosign generate-key-pair writes it.
func cosignKey(t *testing.T, password string) (priv, pub []byte) {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), func(bool) ([]byte, error) { return []byte(password), nil })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("not an encrypted cosign key:\n%s", priv)
	}
	return priv, pub
}

func keySigner(t *testing.T, priv []byte, password string) *Signer {
	t.Helper()
	k, err := LoadKey(priv, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Key: k})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keyVerifier checks signatures made without a log (keySigner's), as
// --insecure-ignore-tlog does.
func keyVerifier(t *testing.T, pub []byte) *Verifier {
	t.Helper()
	v, err := NewVerifier(Policy{PublicKeyPEM: pub, IgnoreTlog: true})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestKeyRoundTripBothFormats(t *testing.T) {
	priv, pub := cosignKey(t, "s3cret")
	s := keySigner(t, priv, "s3cret")
	_, otherPub := cosignKey(t, "x")
	ctx := context.Background()

	b, err := s.Bundle(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyVerifier(t, pub).VerifyBundle(b, subject); err != nil {
		t.Fatalf("bundle by the key: %v", err)
	}
	if err := keyVerifier(t, otherPub).VerifyBundle(b, subject); err == nil {
		t.Fatal("bundle verified with another key")
	}
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("cd", 32)}
	if err := keyVerifier(t, pub).VerifyBundle(b, other); err == nil {
		t.Fatal("bundle verified for another digest")
	}

	l, err := s.Legacy(ctx, "registry.example.com/group/helper", subject)
	if err != nil {
		t.Fatal(err)
	}
	sig := b64(l.Signature)
	if err := keyVerifier(t, pub).VerifyLegacy(l.Payload, sig, "", subject); err != nil {
		t.Fatalf("legacy by the key: %v", err)
	}
	if err := keyVerifier(t, otherPub).VerifyLegacy(l.Payload, sig, "", subject); err == nil {
		t.Fatal("legacy verified with another key")
	}
	if err := keyVerifier(t, pub).VerifyLegacy(l.Payload, sig, "", other); err == nil {
		t.Fatal("legacy verified for a digest its payload does not name")
	}
	tampered := []byte(strings.Replace(string(l.Payload), subject.Hex, other.Hex, 1))
	if err := keyVerifier(t, pub).VerifyLegacy(tampered, sig, "", other); err == nil {
		t.Fatal("tampered payload verified")
	}
}

func TestLoadKeyRefusals(t *testing.T) {
	priv, _ := cosignKey(t, "right")
	if _, err := LoadKey(priv, []byte("wrong")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := LoadKey(priv, nil); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("no password: %v", err)
	}
	if _, err := LoadKey([]byte("not pem"), nil); err == nil || !strings.Contains(err.Error(), "PEM") {
		t.Fatalf("not PEM: %v", err)
	}
	plain, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(plain, nil); err != nil {
		t.Fatalf("plain PKCS#8: %v", err)
	}
	p384, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P384(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(p384, nil); err == nil || !strings.Contains(err.Error(), "P-256") {
		t.Fatalf("P-384: %v", err)
	}
}
