package release

import (
	"errors"
	"net/http"

	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/retry"
	"github.com/helperbuild/helperbuild/internal/sign"
)

// SignRequest is push --sign's and merge --sign's settings as the command
// gathered them from flags and environment: either a key (its PEM and
// password) or an OIDC token (keyless).
type SignRequest struct {
	// KeyPEM is the signing key (cosign.key or PKCS#8 ECDSA); KeyName
	// names it in errors (--sign-key's value). Password decrypts it.
	KeyPEM   []byte
	KeyName  string
	Password []byte
	// IDToken is the OIDC token of the keyless mode (SIGSTORE_ID_TOKEN).
	IDToken string
	// Format is bundle, legacy, legacy-referrer or auto.
	Format string
	// RekorURL is the transparency log ("": none); FulcioURL the
	// certificate authority of the keyless mode.
	RekorURL, FulcioURL string
}

// SignaturePolicy is verify --signature's policy: a public key, or a
// certificate identity and issuer with a trusted root.
type SignaturePolicy = sign.Policy

// signing checks req and makes publish's Signing over a Signer that keeps
// its bundles, before anything compiles or is read from a registry: the
// key is decrypted, a token's expiry checked. Fulcio and Rekor are reached
// with reg's retries. A nil req signs nothing.
func (req *SignRequest) signing(reg Registry) (publish.Signing, *Signer, error) {
	if req == nil {
		return publish.Signing{}, nil, nil
	}
	format := publish.SignFormat(req.Format)
	switch format {
	case publish.SignBundle, publish.SignLegacy, publish.SignLegacyReferrer, publish.SignAuto:
	case "":
		format = publish.SignAuto
	default:
		return publish.Signing{}, nil, inputf("--sign-format %q: want bundle, legacy, legacy-referrer or auto", req.Format)
	}
	ro := retry.DefaultOptions()
	ro.Retries, ro.Timeout = reg.Retries, reg.Timeout
	rt, err := retry.New(http.DefaultTransport, ro)
	if err != nil {
		return publish.Signing{}, nil, &InputError{err}
	}
	opts := sign.Options{Transport: rt, FulcioURL: req.FulcioURL, RekorURL: req.RekorURL, IDToken: req.IDToken}
	if len(req.KeyPEM) > 0 {
		k, err := sign.LoadKey(req.KeyPEM, req.Password)
		if errors.Is(err, sign.ErrWrongPassword) {
			return publish.Signing{}, nil, inputf("--sign-key %s: COSIGN_PASSWORD does not decrypt it (set COSIGN_PASSWORD to the password the key was made with)", req.KeyName)
		}
		if err != nil {
			return publish.Signing{}, nil, inputf("--sign-key %s: %v", req.KeyName, err)
		}
		opts.Key, opts.IDToken = k, ""
	} else if req.IDToken == "" {
		return publish.Signing{}, nil, inputf("--sign needs a key (--sign-key cosign.key) or, keyless, an OIDC token in SIGSTORE_ID_TOKEN (in GitLab CI: id_tokens: SIGSTORE_ID_TOKEN: aud: sigstore)")
	}
	s, err := sign.New(opts)
	if err != nil {
		return publish.Signing{}, nil, inputf("--sign: %v", err)
	}
	rs := NewSigner(s, nil)
	return publish.Signing{Signer: rs, Format: format, Identity: s.Identity()}, rs, nil
}

// SignedBy names who signs the run (a key's hint, or the certificate's
// identity); "" when it does not sign.
func (p *Prepared) SignedBy() string {
	if p.signer == nil {
		return ""
	}
	return p.signer.Identity()
}
