package release

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/sign"
)

// Report is what a run did: each image as built and as the destination
// names it, so a command prints it without knowing destinations.
type Report struct {
	Images []ReportImage
	// Where is the kind of place the images went; Path is the layout
	// directory or archive file, Single says its entries are named by tag
	// alone (config-free).
	Where  Where
	Path   string
	Single bool
	// DefaultBase says the base is config-free mode's default (scratch),
	// not given: the summary says what another base would add.
	DefaultBase bool
	// Sources are, for an index run, where each platform came from and
	// what its binaries showed; DryRunIndex the index --dry-run would have
	// written (nothing was).
	Sources     []IndexSource
	DryRunIndex []byte
	// bundles are the signatures' Sigstore bundles, for --attest-dir.
	bundles []SignedBundle
}

// ReportImage is one image of a Report.
type ReportImage struct {
	product.Image
	// Reference is where the image is: a registry repository, or the
	// layout reference of its first entry. Pinned is it pinned by the
	// index digest (a by-digest job's says no index was pushed).
	Reference, Pinned string
	// IndexTags are the full references of the tags that point at the
	// index; PlatformTags[i] those of Platforms[i]'s tags.
	IndexTags    []string
	PlatformTags [][]string
	// Tag is the tag a later job most likely wants: the first that is not
	// latest, else latest; "" when there is none.
	Tag string
	// Signatures are those push --sign or merge --sign wrote in the
	// image's repository (the index's, then its entries'); SignedBy names
	// the signer, SignedAs as verifiers name it (nil: unsigned).
	Signatures []Signature
	SignedBy   string
	SignedAs   *sign.Who
}

// OutputError is a run that published everything but could not write an
// output file (metadata, dotenv, attest-dir): the report is still true.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// newReport names res's images as dest does.
func newReport(res *product.Result, t tail) *Report {
	dest := t.dest
	rep := &Report{Where: t.where, Path: t.path, Single: t.single}
	if t.signer != nil {
		rep.bundles = t.signer.Bundles()
	}
	for _, img := range res.Images {
		pi := img.Publish()
		ri := ReportImage{Image: img, Reference: dest.Reference(pi), Pinned: dest.Pinned(pi, img.Digest), IndexTags: dest.IndexTags(pi)}
		for _, p := range img.Platforms {
			tags := []string{}
			for _, t := range p.Tags {
				tags = append(tags, dest.PlatformTag(pi, t))
			}
			ri.PlatformTags = append(ri.PlatformTags, tags)
		}
		ri.Tag = PreferredTag(ri.IndexTags)
		ri.Signatures, ri.SignedBy = signaturesOf(dest, pi)
		if len(ri.Signatures) > 0 && t.signer != nil {
			// After signing: a keyless signer is named by its certificate.
			ri.SignedBy, ri.SignedAs = t.signer.Identity(), t.signer.who()
		}
		rep.Images = append(rep.Images, ri)
	}
	return rep
}

// write writes the output files of rep; none is written half.
func (rep *Report) write(out Outputs) error {
	if out.AttestDir != "" {
		if err := rep.writeAttestDir(out.AttestDir); err != nil {
			return &OutputError{err}
		}
		if err := rep.writeBundles(out.AttestDir); err != nil {
			return &OutputError{err}
		}
	}
	if out.Metadata != "" {
		if err := rep.writeMetadata(out.Metadata); err != nil {
			return &OutputError{fmt.Errorf("metadata file: %w", err)}
		}
	}
	if out.Dotenv != "" {
		if err := rep.writeDotenv(out.Dotenv); err != nil {
			return &OutputError{err}
		}
	}
	return nil
}

// writeAttestDir writes every platform's statements and SPDX document
// under dir: IMAGE/OS-ARCH[-VARIANT]/, each file whole or not at all (a
// CI artifact collector never takes half a statement).
func (rep *Report) writeAttestDir(dir string) error {
	for _, img := range rep.Images {
		for _, p := range img.Platforms {
			at := p.Attestation
			if at == nil || at.SPDX == nil {
				continue // none, or a merge's (digests only)
			}
			pd := filepath.Join(dir, img.Name, strings.ReplaceAll(platform.Format(p.Platform), "/", "-"))
			if err := os.MkdirAll(pd, 0o755); err != nil {
				return fmt.Errorf("--attest-dir: %w", err)
			}
			for name, data := range map[string][]byte{
				"sbom.spdx.json":         at.SPDX,
				"sbom.intoto.json":       at.SBOM.JSON,
				"provenance.intoto.json": at.Provenance.JSON,
			} {
				if err := outfile.WriteBytes(filepath.Join(pd, name), data); err != nil {
					return fmt.Errorf("--attest-dir: %w", err)
				}
			}
		}
	}
	return nil
}

// IsOutputError says err is an *OutputError.
func IsOutputError(err error) bool {
	var o *OutputError
	return errors.As(err, &o)
}
