package product

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/manifest"
)

// AttestMode says where a release puts each platform image's SBOM and
// provenance.
type AttestMode string

const (
	// AttestNone writes no attestation (the zero value).
	AttestNone AttestMode = "none"
	// AttestIndex lists one attestation manifest per platform image in the
	// image index, after all platform images, as BuildKit does.
	AttestIndex AttestMode = "index"
	// AttestReferrers makes each statement (and the SBOM as a plain SPDX
	// document) an OCI 1.1 referrer of its platform manifest; the index
	// lists the platform images only.
	AttestReferrers AttestMode = "referrers"
)

// On says whether m writes attestations.
func (m AttestMode) On() bool { return m == AttestIndex || m == AttestReferrers }

// ParseAttestMode parses --attest.
func ParseAttestMode(s string) (AttestMode, error) {
	switch m := AttestMode(s); m {
	case AttestNone, AttestIndex, AttestReferrers:
		return m, nil
	}
	return "", fmt.Errorf("--attest %q: want index, referrers or none", s)
}

// Attestation is what a release says about one platform image. A merge
// (which reads the attestation manifests the jobs pushed) fills Digests
// alone.
type Attestation struct {
	// Digests name the statements and the manifests that carry them.
	Digests AttestationDigests
	// SBOM and Provenance are the in-toto statements; SPDX the SBOM's
	// document alone.
	SBOM, Provenance attest.Statement
	SPDX             []byte
	// Manifest is the attestation manifest the index lists (AttestIndex).
	Manifest *attest.Artifact
	// Referrers are the artifacts whose subject is the platform manifest
	// (AttestReferrers): the SBOM statement, the provenance statement, the
	// plain SPDX document.
	Referrers []*attest.Artifact
}

// AttestationDigests name a platform's attestations: the SBOM and
// provenance statements (the layers that hold them), and the attestation
// manifest in the index or the referrers.
type AttestationDigests struct {
	SBOM, Provenance v1.Hash
	Manifest         v1.Hash   // AttestIndex
	Referrers        []v1.Hash // AttestReferrers
}

// DigestsOf names at's statements and manifests.
func DigestsOf(at *Attestation) (AttestationDigests, error) {
	var d AttestationDigests
	if len(at.SBOM.JSON) > 0 { // a join writes no SBOM
		d.SBOM = at.SBOM.Digest()
	}
	if len(at.Provenance.JSON) > 0 {
		d.Provenance = at.Provenance.Digest()
	}
	if at.Manifest != nil {
		h, err := at.Manifest.Digest()
		if err != nil {
			return d, err
		}
		d.Manifest = h
	}
	for _, r := range at.Referrers {
		h, err := r.Digest()
		if err != nil {
			return d, err
		}
		d.Referrers = append(d.Referrers, h)
	}
	return d, nil
}

// Attachments are the index's attestation entries: one per platform with
// an attestation manifest, in platform order.
func Attachments(platforms []Platform) []manifest.Attachment {
	var out []manifest.Attachment
	for _, p := range platforms {
		if p.Attestation != nil && p.Attestation.Manifest != nil {
			out = append(out, manifest.Attachment{Entry: p.Attestation.Manifest.IndexEntry(), Image: p.Attestation.Manifest})
		}
	}
	return out
}
