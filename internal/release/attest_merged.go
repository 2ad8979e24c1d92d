package release

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/product"
)

// mergedAttestation names the statements of an attestation manifest a
// job pushed (BuildKit's layout: one layer per statement, annotated with
// its predicate type).
func mergedAttestation(digest v1.Hash, m *v1.Manifest) *product.Attestation {
	at := &product.Attestation{Digests: product.AttestationDigests{Manifest: digest}}
	for _, l := range m.Layers {
		switch l.Annotations[attestspec.AnnotationPredicateType] {
		case attestspec.PredicateSPDX:
			at.Digests.SBOM = l.Digest
		case attestspec.PredicateSLSA:
			at.Digests.Provenance = l.Digest
		}
	}
	return at
}
