package release

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"time"

	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/retry"
	"github.com/helperbuild/helperbuild/internal/sign"
)

// SignRequest is push --sign's and merge --sign's settings as the command
// gathered them from flags and environment: either a key (a file, or the
// PEM of an env://NAME variable, and its password) or an OIDC token
// (keyless).
type SignRequest struct {
	// KeyName is --sign-key's value: a key file (cosign.key or PKCS#8
	// ECDSA), read when the request is checked unless KeyPEM is set; with
	// KeyPEM (the command read an env://NAME variable) only the name
	// messages show. KeyPEM is the key as read. Password decrypts it.
	KeyName  string
	KeyPEM   []byte
	Password []byte
	// PasswordUnset says COSIGN_PASSWORD was not set at all (Password is
	// empty), so a key that needs one is told apart from a wrong one.
	PasswordUnset bool
	// IDToken is the OIDC token of the keyless mode (SIGSTORE_ID_TOKEN).
	IDToken string
	// Format is bundle, legacy, legacy-referrer or auto.
	Format string
	// RekorURL is the transparency log ("": none); FulcioURL the
	// certificate authority of the keyless mode.
	RekorURL, FulcioURL string
	// Probe carries the preflight's requests to them (no retries; nil:
	// http.DefaultTransport): tests give a transport that reaches nothing.
	Probe http.RoundTripper
}

// SignatureRequest is verify --signature's settings: a public key file,
// or a certificate identity and issuer (exact or regexp) with a trusted
// root file; the files are read when the request is checked.
type SignatureRequest struct {
	KeyFile, TrustedRootFile                       string
	Identity, IdentityRegexp, Issuer, IssuerRegexp string
	// IgnoreTlog accepts signatures without a transparency log entry.
	IgnoreTlog bool
}

// policy reads r's files into sign's Policy.
func (r SignatureRequest) policy() (sign.Policy, error) {
	p := sign.Policy{Identity: r.Identity, IdentityRegexp: r.IdentityRegexp, Issuer: r.Issuer, IssuerRegexp: r.IssuerRegexp, IgnoreTlog: r.IgnoreTlog}
	var err error
	if r.KeyFile != "" {
		if p.PublicKeyPEM, err = os.ReadFile(r.KeyFile); err != nil {
			return p, inputf("--key %s: %v", r.KeyFile, pathReason(err))
		}
	}
	if r.TrustedRootFile != "" {
		if p.TrustedRoot, err = os.ReadFile(r.TrustedRootFile); err != nil {
			return p, inputf("--trusted-root %s: %v", r.TrustedRootFile, pathReason(err))
		}
	}
	return p, nil
}

// readKey fills req.KeyPEM from the --sign-key file, unless the command
// gave the key itself.
func (req *SignRequest) readKey() error {
	if len(req.KeyPEM) > 0 || req.KeyName == "" {
		return nil
	}
	b, err := os.ReadFile(req.KeyName)
	if err != nil {
		return inputf("--sign-key %s: %v", req.KeyName, pathReason(err))
	}
	req.KeyPEM = b
	return nil
}

// pathReason is err without the path the message names already.
func pathReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

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
	if err := req.readKey(); err != nil {
		return publish.Signing{}, nil, err
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
		if errors.Is(err, sign.ErrWrongPassword) && req.PasswordUnset {
			return publish.Signing{}, nil, inputf("--sign-key %s: the key is encrypted and COSIGN_PASSWORD is not set (set it to the password the key was made with)", req.KeyName)
		}
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
	preflight := func(ctx context.Context) error { return signPreflight(ctx, s, req.Probe, len(req.KeyPEM) > 0) }
	return publish.Signing{Signer: rs, Format: format, Identity: s.Identity(), Preflight: preflight}, rs, nil
}

// signPreflightTimeout bounds the preflight's request to each service.
const signPreflightTimeout = 5 * time.Second

// signPreflight checks that the log and, keyless, the CA answer, and
// says what to do where they cannot be reached: signing would otherwise
// fail after every compile and upload.
func signPreflight(ctx context.Context, s *sign.Signer, rt http.RoundTripper, keyed bool) error {
	err := s.Reachable(ctx, rt, signPreflightTimeout)
	var ue *sign.UnreachableError
	if !errors.As(err, &ue) {
		return err
	}
	how := "point --sign-tlog at a Rekor this job reaches, or, air-gapped, sign with --sign-tlog none " +
		"(verifiers then need --insecure-ignore-tlog, cluster policies ignoreTlog)"
	switch {
	case ue.Service == sign.ServiceCA:
		how = "point --sign-fulcio-url at a Fulcio this job reaches, or, air-gapped, sign with a key " +
			"(--sign-key cosign.key --sign-tlog none; verifiers then need --insecure-ignore-tlog)"
	case !keyed:
		how = "point --sign-tlog at a Rekor this job reaches (keyless signing needs a log), or, air-gapped, sign with a key " +
			"(--sign-key cosign.key --sign-tlog none; verifiers then need --insecure-ignore-tlog)"
	}
	return fmt.Errorf("--sign: %w; nothing was built or uploaded: %s", err, how)
}

// SignedBy names who signs the run (a key's hint, or the certificate's
// identity); "" when it does not sign.
func (p *Prepared) SignedBy() string {
	if p.signer == nil {
		return ""
	}
	return p.signer.Identity()
}
