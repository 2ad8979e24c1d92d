package main

import (
	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/release"
)

// verifySignFlags are verify --signature's flags, named as cosign verify's.
type verifySignFlags struct {
	on                       bool
	key                      string
	identity, identityRegexp string
	issuer, issuerRegexp     string
	trustedRoot              string
	ignoreTlog               bool
}

func (f *verifySignFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.on, "signature", false, "the index and every platform manifest carry a valid cosign signature (bundle referrer or .sig tag) by --key or the certificate identity")
	fl.StringVar(&f.key, "key", "", "with --signature: the signer's public key (cosign.pub)")
	fl.StringVar(&f.identity, "certificate-identity", "", "with --signature, keyless: the certificate's identity, e.g. https://gitlab.com/GROUP/PROJECT//.gitlab-ci.yml@refs/tags/v1.2.3")
	fl.StringVar(&f.identityRegexp, "certificate-identity-regexp", "", "with --signature, keyless: a regular expression the certificate's identity matches")
	fl.StringVar(&f.issuer, "certificate-oidc-issuer", "", "with --signature, keyless: the OIDC issuer, e.g. https://gitlab.com")
	fl.StringVar(&f.issuerRegexp, "certificate-oidc-issuer-regexp", "", "with --signature, keyless: a regular expression the OIDC issuer matches")
	fl.StringVar(&f.trustedRoot, "trusted-root", "", "with --signature: Sigstore trusted root file (trusted_root.json), checked offline: the CAs of keyless signatures and the transparency logs every signature's entry is checked against")
	fl.BoolVar(&f.ignoreTlog, "insecure-ignore-tlog", false, "with --signature: accept signatures without a transparency log entry, as cosign's flag (signed with --sign-tlog none); nothing then proves when they were signed, and a certificate is checked at the current time")
}

// apply makes target check signatures (release reads the key or trusted
// root); without --signature it checks none.
func (f *verifySignFlags) apply(target *release.VerifyTarget) error {
	if !f.on {
		if f.key != "" || f.identity != "" || f.identityRegexp != "" || f.trustedRoot != "" {
			return usagef("--key, --certificate-identity and --trusted-root check signatures: add --signature")
		}
		return nil
	}
	return target.CheckSignatures(release.SignatureRequest{KeyFile: f.key, TrustedRootFile: f.trustedRoot, Identity: f.identity,
		IdentityRegexp: f.identityRegexp, Issuer: f.issuer, IssuerRegexp: f.issuerRegexp, IgnoreTlog: f.ignoreTlog})
}
