package tokenauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// signer holds the test CA (the registry's rootcertbundle) and the key and
// certificate, issued by it, that sign tokens.
type signer struct {
	caPEM   []byte
	leafDER []byte
	key     *ecdsa.PrivateKey
}

// newSigner makes a P-256 CA and a signing certificate issued by it, valid
// from an hour before now for a day.
func newSigner(now time.Time) (*signer, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tokenauth test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("test CA: %w", err)
	}
	ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "tokenauth token signer"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("token signing certificate: %w", err)
	}
	return &signer{
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		leafDER: leafDER,
		key:     key,
	}, nil
}

// resourceActions is one entry of a token's access claim.
type resourceActions struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// claims is distribution's ClaimSet; aud is one string, which both
// distribution 2.8 and v3 read.
type claims struct {
	Issuer     string            `json:"iss"`
	Subject    string            `json:"sub"`
	Audience   string            `json:"aud"`
	Expiration int64             `json:"exp"`
	NotBefore  int64             `json:"nbf"`
	IssuedAt   int64             `json:"iat"`
	JWTID      string            `json:"jti"`
	Access     []resourceActions `json:"access"`
}

// sign returns the compact JWS of c: ES256, with the signing certificate in
// x5c, which distribution 2.8 and v3 verify against rootcertbundle.
func (s *signer) sign(c claims) (string, error) {
	header := map[string]any{
		"typ": "JWT",
		"alg": "ES256",
		"x5c": []string{base64.StdEncoding.EncodeToString(s.leafDER)},
	}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	digest := sha256.Sum256([]byte(input))
	r, sv, err := ecdsa.Sign(rand.Reader, s.key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64) // JWS ES256: r and s, 32 bytes each, big-endian
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
