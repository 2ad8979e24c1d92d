package sign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// ErrWrongPassword is a cosign key that its password does not decrypt.
var ErrWrongPassword = errors.New("the password does not decrypt the key")

// keyPair is an ECDSA P-256 private key as sigstore-go's sign.Keypair.
type keyPair struct {
	priv crypto.Signer
	alg  signature.AlgorithmDetails
	hint []byte
}

var _ sgsign.Keypair = (*keyPair)(nil)

// LoadKey reads a PEM private key: cosign's encrypted key (cosign.key,
// "ENCRYPTED SIGSTORE PRIVATE KEY" or "ENCRYPTED COSIGN PRIVATE KEY",
// decrypted with password, empty included) or a plain PKCS#8 or SEC 1
// ECDSA P-256 key (password ignored).
func LoadKey(pemBytes, password []byte) (sgsign.Keypair, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block: want a cosign key (cosign generate-key-pair) or a PKCS#8 ECDSA P-256 PEM")
	}
	var pf cryptoutils.PassFunc
	encrypted := block.Type == string(cryptoutils.EncryptedSigstorePrivateKeyPEMType) || block.Type == "ENCRYPTED COSIGN PRIVATE KEY"
	if encrypted {
		pw := password
		if pw == nil {
			pw = []byte{}
		}
		pf = func(bool) ([]byte, error) { return pw, nil }
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, pf)
	if err != nil {
		if encrypted {
			return nil, ErrWrongPassword
		}
		return nil, fmt.Errorf("PEM %q: %w", block.Type, err)
	}
	return newKeyPair(priv)
}

// GenerateKey returns a new ECDSA P-256 key, for keyless signing (its
// certificate comes from Fulcio) and for tests.
func GenerateKey() (sgsign.Keypair, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return newKeyPair(priv)
}

func newKeyPair(priv crypto.PrivateKey) (*keyPair, error) {
	ec, ok := priv.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("key is a %T, not ECDSA P-256: generate one with cosign generate-key-pair", priv)
	}
	alg, err := signature.GetAlgorithmDetails(protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(ec.Public())
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return &keyPair{priv: ec, alg: alg, hint: []byte(base64.StdEncoding.EncodeToString(sum[:]))}, nil
}

func (k *keyPair) GetHashAlgorithm() protocommon.HashAlgorithm { return k.alg.GetProtoHashType() }
func (k *keyPair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return k.alg.GetSignatureAlgorithm()
}
func (k *keyPair) GetHint() []byte                { return k.hint }
func (k *keyPair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k *keyPair) GetPublicKey() crypto.PublicKey { return k.priv.Public() }
func (k *keyPair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.priv.Public())
	return string(b), err
}

// SignData signs SHA-256(data), returning the signature and the digest.
func (k *keyPair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := k.priv.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return nil, nil, err
	}
	return sig, sum[:], nil
}
