package release

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// Signature is one signature a signed push or merge wrote.
type Signature struct {
	// Subject is the signed manifest's digest; Format bundle or legacy.
	Subject, Format string
	// Digest is the signature's manifest: the bundle referrer, or the
	// .sig image (with Tag).
	Digest, Tag string
}

// MetadataSignature is one signature in the --metadata-file.
type MetadataSignature struct {
	Subject string `json:"subject"`
	Format  string `json:"format"`
	Digest  string `json:"digest"`
	Tag     string `json:"tag,omitempty"`
	Signer  string `json:"signer"`
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
		out = append(out, MetadataSignature{Subject: s.Subject, Format: s.Format, Digest: s.Digest, Tag: s.Tag, Signer: img.SignedBy})
	}
	return out
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
	for _, f := range []publish.SignFormat{publish.SignBundle, publish.SignLegacy} {
		if n := formats[string(f)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, f))
		}
	}
	return fmt.Sprintf("signed: %s (the index and each manifest) by %s", strings.Join(parts, ", "), img.SignedBy)
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
