package release

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/sign"
)

// Signature is one signature a signed push or merge wrote.
type Signature struct {
	// Subject is the signed manifest's digest; Format bundle or legacy.
	Subject, Format string
	// Digest is the signature's manifest: the bundle referrer, or the
	// .sig image (with Tag).
	Digest, Tag string
}

// MetadataSignature is one signature in the --metadata-file: the signed
// digest, the signature's manifest (and .sig tag), the signer in words
// and as verifiers name it (a key's fingerprint, or the certificate's
// identity and issuer).
type MetadataSignature struct {
	Subject string `json:"subject"`
	Format  string `json:"format"`
	Digest  string `json:"digest"`
	Tag     string `json:"tag,omitempty"`
	Signer  string `json:"signer"`
	sign.Who
}

// signed is a destination that signs (the registry's).
type signed interface {
	Signatures(img publish.Image) ([]publish.Signature, string)
}

// signaturesOf are the signatures dest wrote for img, and its signer.
func signaturesOf(dest destination, img publish.Image) ([]Signature, string) {
	s, ok := dest.(signed)
	if !ok {
		return nil, ""
	}
	sigs, by := s.Signatures(img)
	if len(sigs) == 0 {
		return nil, ""
	}
	var out []Signature
	for _, sg := range sigs {
		out = append(out, Signature{Subject: sg.Subject.String(), Format: string(sg.Format), Digest: sg.Digest.String(), Tag: sg.Tag})
	}
	return out, by
}

func signatureMetadata(img ReportImage) []MetadataSignature {
	var out []MetadataSignature
	for _, s := range img.Signatures {
		ms := MetadataSignature{Subject: s.Subject, Format: s.Format, Digest: s.Digest, Tag: s.Tag, Signer: img.SignedBy}
		if img.SignedAs != nil {
			ms.Who = *img.SignedAs
		}
		out = append(out, ms)
	}
	return out
}

// signatureKeys are the dotenv keys of a signed image's (none unsigned):
// its index's signature, its signer, a keyless signer's issuer.
func signatureKeys(key string, w *sign.Who) []string {
	switch {
	case w == nil:
		return nil
	case w.Key != "":
		return []string{key + "_SIGNATURE", key + "_SIGNER"}
	}
	return []string{key + "_SIGNATURE", key + "_SIGNER", key + "_SIGNER_ISSUER"}
}

// signatureValues are the values of signatureKeys for img, nil when it
// has no signature of its index: the signature's manifest pinned by
// digest in img's repository (the first one, when the index has two),
// the key's fingerprint or the certificate's identity, its issuer.
func (img ReportImage) signatureValues() []string {
	if img.SignedAs == nil {
		return nil
	}
	for _, s := range img.Signatures {
		if s.Subject != img.Digest.String() {
			continue
		}
		out := []string{img.Reference + "@" + s.Digest}
		if img.SignedAs.Key != "" {
			return append(out, img.SignedAs.Key)
		}
		return append(out, img.SignedAs.Identity, img.SignedAs.Issuer)
	}
	return nil
}

// SignatureLine is the summary's line about img's signatures, "" when it
// has none: how many in which format, by whom.
func (img ReportImage) SignatureLine() string {
	if len(img.Signatures) == 0 {
		return ""
	}
	formats := map[string]int{}
	for _, s := range img.Signatures {
		formats[s.Format]++
	}
	var parts []string
	for _, f := range []publish.SignFormat{publish.SignBundle, publish.SignLegacyReferrer, publish.SignLegacy} {
		if n := formats[string(f)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, f))
		}
	}
	kinds := map[string]int{}
	names := img.signedNames()
	for _, s := range img.Signatures {
		switch what := names[s.Subject]; {
		case what == "index":
			kinds["index"]++
		case strings.HasPrefix(what, "attestations of "), what == "":
			kinds["attestation"]++
		default:
			kinds["platform"]++
		}
	}
	var of []string
	if kinds["index"] > 0 {
		of = append(of, "the index")
	}
	if n := kinds["platform"]; n > 0 {
		of = append(of, fmt.Sprintf("%d platform %s", n, progress.Plural(n, "manifest", "manifests")))
	}
	if n := kinds["attestation"]; n > 0 {
		of = append(of, fmt.Sprintf("%d attestation %s", n, progress.Plural(n, "manifest", "manifests")))
	}
	return fmt.Sprintf("signed: %s (%s) by %s", strings.Join(parts, ", "), strings.Join(of, ", "), img.SignedBy)
}

// signedNames names each manifest of img a signature may be about: the
// index, each platform, and the attestation manifest of each platform
// ("attestations of linux/amd64"), as the index's entries say.
func (img ReportImage) signedNames() map[string]string {
	names := map[string]string{img.Digest.String(): "index"}
	for _, p := range img.Platforms {
		names[p.Digest.String()] = platform.Format(p.Platform)
	}
	if img.Index == nil {
		return names
	}
	if im, err := img.Index.IndexManifest(); err == nil {
		for _, d := range im.Manifests {
			if of, ok := names[d.Annotations[attestspec.AnnotationReferenceDigest]]; ok && attestspec.IsAttestation(d) {
				names[d.Digest.String()] = "attestations of " + of
			}
		}
	}
	return names
}

// SignatureDigests are the summary's lines under SignatureLine: per
// signature, what it signs (index, platform, a platform's attestations)
// and its manifest's digest (and .sig tag).
func (img ReportImage) SignatureDigests() []string {
	names := img.signedNames()
	width := 0
	for _, s := range img.Signatures {
		width = max(width, len(cmp.Or(names[s.Subject], s.Subject)))
	}
	var out []string
	for _, s := range img.Signatures {
		line := fmt.Sprintf("%-*s  %s %s", width, cmp.Or(names[s.Subject], s.Subject), s.Format, s.Digest)
		if s.Tag != "" {
			line += " (tag " + s.Tag + ")"
		}
		out = append(out, line)
	}
	return out
}

// writeBundles writes the signature bundles of the index and of each
// platform manifest beside the attestations: IMAGE/index.sigstore.json,
// IMAGE/OS-ARCH/signature.sigstore.json (the first bundle of a digest
// when several repositories got one), each whole or not at all.
func (rep *Report) writeBundles(dir string) error {
	written := map[string]bool{}
	for _, b := range rep.bundles {
		for _, img := range rep.Images {
			path := ""
			if b.Subject == img.Digest {
				path = filepath.Join(dir, img.Name, "index.sigstore.json")
			}
			for _, p := range img.Platforms {
				if p.Digest == b.Subject {
					path = filepath.Join(dir, img.Name, strings.ReplaceAll(platform.Format(p.Platform), "/", "-"), "signature.sigstore.json")
				}
			}
			if path == "" || written[path] {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return fmt.Errorf("--attest-dir: %w", err)
			}
			if err := outfile.WriteBytes(path, b.JSON); err != nil {
				return fmt.Errorf("--attest-dir: %w", err)
			}
			written[path] = true
		}
	}
	return nil
}
