package sign

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"google.golang.org/protobuf/encoding/protojson"
)

// Policy says whose signature verify accepts: a public key, or a
// certificate identity (exact or regexp) from an OIDC issuer (exact or
// regexp) whose certificate chains to TrustedRoot.
type Policy struct {
	// PublicKeyPEM is the signer's public key (cosign.pub).
	PublicKeyPEM []byte
	// Identity / IdentityRegexp match the certificate's subject
	// alternative name; Issuer / IssuerRegexp its OIDC issuer.
	Identity, IdentityRegexp, Issuer, IssuerRegexp string
	// TrustedRoot is a Sigstore trusted root (trusted_root.json): Fulcio
	// CAs, Rekor and CT logs, TSAs. Needed with an identity.
	TrustedRoot []byte
	// IgnoreTlog accepts a signature without a transparency log entry
	// (cosign's --insecure-ignore-tlog): a key's signature is then
	// checked at no particular time, a certificate at the current time.
	// Without it, as cosign, a signature needs a log entry, checked
	// against TrustedRoot's logs (a key's too).
	IgnoreTlog bool
}

// Verifier checks signatures against one Policy, offline.
type Verifier struct {
	v        *sgverify.Verifier
	identity []sgverify.PolicyOption
	keyed    bool
	// needTlog: a signature without a log entry is refused (errNoTlog);
	// noLogKeys: there is no trusted root to check an entry with.
	needTlog, noLogKeys bool
}

// errNoTlog refuses a signature without a transparency log entry, as
// cosign, Kyverno and policy-controller do unless told otherwise.
var errNoTlog = errors.New("no transparency log entry, so nothing proves when it was signed " +
	"(a leaked key's or an expired certificate's signatures look the same as any other) and cosign, " +
	"Kyverno and policy-controller refuse it unless told to ignore the log (ignoreTlog); " +
	"to accept signatures made without a log (--sign-tlog none, air-gapped) give --insecure-ignore-tlog")

// errNoLogKeys refuses a key's signature whose log entry cannot be
// checked: a key-based verify without a trusted root has no log keys.
var errNoLogKeys = errors.New("a transparency log entry, but no trusted root to check it against: " +
	"give the log's trusted root (--trusted-root trusted_root.json, e.g. from cosign trusted-root create), " +
	"or --insecure-ignore-tlog to check the signature alone")

// NewVerifier checks p and prepares its trusted material.
func NewVerifier(p Policy) (*Verifier, error) {
	keyed := len(p.PublicKeyPEM) > 0
	ident := p.Identity != "" || p.IdentityRegexp != ""
	switch {
	case keyed && (ident || p.Issuer != "" || p.IssuerRegexp != ""):
		return nil, errors.New("a key or a certificate identity, not both")
	case !keyed && !ident:
		return nil, errors.New("no key and no certificate identity to verify signatures against")
	case !keyed && p.Issuer == "" && p.IssuerRegexp == "":
		return nil, errors.New("a certificate identity needs its OIDC issuer (--certificate-oidc-issuer or --certificate-oidc-issuer-regexp)")
	case !keyed && len(p.TrustedRoot) == 0:
		return nil, errors.New("a certificate identity needs a trusted root file (--trusted-root)")
	}
	if keyed {
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(p.PublicKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		sv, err := signature.LoadVerifier(pub, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		key := root.NewExpiringKey(sv, timeZero, timeZero)
		var tm root.TrustedMaterial = root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
		opts := []sgverify.VerifierOption{sgverify.WithNoObserverTimestamps()}
		if !p.IgnoreTlog && len(p.TrustedRoot) > 0 {
			tr, err := root.NewTrustedRootFromJSON(p.TrustedRoot)
			if err != nil {
				return nil, fmt.Errorf("trusted root: %w", err)
			}
			tm = root.TrustedMaterialCollection{tr, tm}
			opts = []sgverify.VerifierOption{sgverify.WithTransparencyLog(1), sgverify.WithIntegratedTimestamps(1)}
		}
		v, err := sgverify.NewVerifier(tm, opts...)
		if err != nil {
			return nil, err
		}
		return &Verifier{v: v, identity: []sgverify.PolicyOption{sgverify.WithKey()}, keyed: true,
			needTlog: !p.IgnoreTlog, noLogKeys: len(p.TrustedRoot) == 0}, nil
	}
	tr, err := root.NewTrustedRootFromJSON(p.TrustedRoot)
	if err != nil {
		return nil, fmt.Errorf("trusted root: %w", err)
	}
	id, err := sgverify.NewShortCertificateIdentity(p.Issuer, p.IssuerRegexp, p.Identity, p.IdentityRegexp)
	if err != nil {
		return nil, fmt.Errorf("certificate identity: %w", err)
	}
	opts := []sgverify.VerifierOption{sgverify.WithTransparencyLog(1), sgverify.WithIntegratedTimestamps(1)}
	if p.IgnoreTlog {
		opts = []sgverify.VerifierOption{sgverify.WithCurrentTime()}
	}
	v, err := sgverify.NewVerifier(tr, opts...)
	if err != nil {
		return nil, err
	}
	return &Verifier{v: v, identity: []sgverify.PolicyOption{sgverify.WithCertificateIdentity(id)}, needTlog: !p.IgnoreTlog}, nil
}

// checkTlog refuses, before any other check, what the policy's log
// requirement rules out: no entry, or an entry that cannot be checked.
func (v *Verifier) checkTlog(entries int) error {
	switch {
	case !v.needTlog:
		return nil
	case entries == 0:
		return errNoTlog
	case v.noLogKeys:
		return errNoLogKeys
	}
	return nil
}

// VerifyBundle checks a Sigstore bundle (JSON) signs subject: its
// signature, its signer against the policy, and the statement's subject.
func (v *Verifier) VerifyBundle(bundleJSON []byte, subject v1.Hash) error {
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	want, err := hex.DecodeString(subject.Hex)
	if err != nil {
		return err
	}
	if err := v.checkTlog(len(b.GetVerificationMaterial().GetTlogEntries())); err != nil {
		return err
	}
	if _, err := v.v.Verify(&b, sgverify.NewPolicy(sgverify.WithArtifactDigest(subject.Algorithm, want), v.identity...)); err != nil {
		return err
	}
	return nil
}

// VerifyLegacy checks one layer of cosign's legacy signature image: the
// base64 signature (and certificate, keyless) over the simple-signing
// payload, and that the payload names subject.
func (v *Verifier) VerifyLegacy(layerPayload []byte, sigB64, certPEM string, subject v1.Hash) error {
	return v.VerifyLegacyLayer(layerPayload, map[string]string{AnnotationSignature: sigB64, AnnotationCertificate: certPEM}, subject)
}

// VerifyLegacyLayer is VerifyLegacy of a layer with its annotations: the
// signature, certificate and, if there is one, the transparency log's
// entry (cosign's AnnotationRekorBundle, which vouches for the time).
func (v *Verifier) VerifyLegacyLayer(layerPayload []byte, ann map[string]string, subject v1.Hash) error {
	sig, err := base64.StdEncoding.DecodeString(ann[AnnotationSignature])
	if err != nil {
		return fmt.Errorf("signature annotation is not base64: %w", err)
	}
	entry, err := tlogEntry(ann[AnnotationRekorBundle])
	if err != nil {
		return err
	}
	entries := 0
	if entry != nil {
		entries = 1
	}
	if err := v.checkTlog(entries); err != nil {
		return err
	}
	sum := sha256.Sum256(layerPayload)
	pb := &protobundle.Bundle{
		MediaType: MediaTypeBundle,
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
		VerificationMaterial: &protobundle.VerificationMaterial{Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{}}},
	}
	if entry != nil {
		// An entry with a signed timestamp and no inclusion proof: what a
		// bundle v0.1 holds.
		pb.MediaType = mediaTypeBundleV01
		pb.VerificationMaterial.TlogEntries = []*protorekor.TransparencyLogEntry{entry}
	}
	if certPEM := ann[AnnotationCertificate]; certPEM != "" {
		block, _ := pem.Decode([]byte(certPEM))
		if block == nil {
			return errors.New("certificate annotation is not PEM")
		}
		pb.VerificationMaterial.Content = &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: block.Bytes}}
		if entry != nil {
			pb.VerificationMaterial.Content = &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
				Certificates: []*protocommon.X509Certificate{{RawBytes: block.Bytes}}}}
		}
	}
	b, err := sgbundle.NewBundle(pb)
	if err != nil {
		return err
	}
	if _, err := v.v.Verify(b, sgverify.NewPolicy(sgverify.WithArtifact(bytes.NewReader(layerPayload)), v.identity...)); err != nil {
		return err
	}
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(layerPayload, &p); err != nil {
		return fmt.Errorf("signed payload: %w", err)
	}
	if got := p.Critical.Image.DockerManifestDigest; got != subject.String() {
		return fmt.Errorf("the signed payload names %s, not %s", got, subject)
	}
	return nil
}

// MarshalBundle re-reads bundleJSON, for writing it out as a file.
func MarshalBundle(bundleJSON []byte) ([]byte, error) {
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(bundleJSON, &pb); err != nil {
		return nil, err
	}
	return protojson.MarshalOptions{Multiline: true}.Marshal(&pb)
}

var timeZero time.Time

// mediaTypeBundleV01 is a Sigstore bundle v0.1, whose log entries carry a
// signed entry timestamp rather than an inclusion proof.
const mediaTypeBundleV01 = "application/vnd.dev.sigstore.bundle+json;version=0.1"
