package attestspec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Media types, artifact types and annotations of attestation manifests, as
// BuildKit writes them (exporter/containerimage/writer.go,
// util/attestation/types.go) and as OCI 1.1 referrers carry them.
const (
	// MediaTypeInToto is an in-toto statement layer.
	MediaTypeInToto = "application/vnd.in-toto+json"
	// MediaTypeSPDX is a plain SPDX JSON document (what trivy's
	// --sbom-sources oci looks for among referrers).
	MediaTypeSPDX = "application/spdx+json"
	// ArtifactTypeAttestationManifest is the artifactType of BuildKit's
	// attestation manifests (since v0.32).
	ArtifactTypeAttestationManifest = "application/vnd.docker.attestation.manifest.v1+json"
	// AnnotationPredicateType names a statement layer's predicate type.
	AnnotationPredicateType = "in-toto.io/predicate-type"
	// AnnotationReferenceType and AnnotationReferenceDigest mark an image
	// index entry as the attestation manifest of the platform manifest
	// with that digest.
	AnnotationReferenceType   = "vnd.docker.reference.type"
	AnnotationReferenceDigest = "vnd.docker.reference.digest"
	// ReferenceTypeAttestation is AnnotationReferenceType's value.
	ReferenceTypeAttestation = "attestation-manifest"
	// PredicateSPDX is the predicate type of an SPDX SBOM.
	PredicateSPDX = "https://spdx.dev/Document"
	// PredicateSLSA is the predicate type of SLSA v1 provenance.
	PredicateSLSA = "https://slsa.dev/provenance/v1"
	// BuildTypeJoin is the buildDefinition.buildType of the provenance
	// helperbuild index writes about an image it joined but did not
	// build; the build's own provenance travels beside it.
	BuildTypeJoin = "https://github.com/helperbuild/helperbuild/buildtypes/index/v1"
)

// IsJoinProvenance reports whether the in-toto statement is the
// provenance of a join (BuildTypeJoin) rather than of a build.
func IsJoinProvenance(statement []byte) bool {
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				BuildType string `json:"buildType"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	return json.Unmarshal(statement, &st) == nil && st.Predicate.BuildDefinition.BuildType == BuildTypeJoin
}

// IsAttestation reports whether the index entry d is an attestation
// manifest. The mark is BuildKit's: the annotation
// vnd.docker.reference.type: attestation-manifest (its
// vnd.docker.reference.digest then names the platform image it is about).
//
// The platform unknown/unknown BuildKit also gives such an entry is not the
// mark: an entry with that platform and without the annotation is no
// attestation (nothing reads statements from it, and merge does not tie it
// to a platform image), but it is no platform's image either: no runtime
// selects unknown/unknown, so IsPlatformImage is false for it and verify
// and --nodes skip it as they skip attestations.
func IsAttestation(d v1.Descriptor) bool {
	return d.Annotations[AnnotationReferenceType] == ReferenceTypeAttestation
}

// UnknownPlatform reports whether d's platform has the OS "unknown" (as
// unknown/unknown), which no runtime selects.
func UnknownPlatform(d v1.Descriptor) bool {
	return d.Platform != nil && d.Platform.OS == "unknown"
}

// IsPlatformImage reports whether the index entry d is a platform's image:
// an image manifest with a platform a runtime can select, and not an
// attestation.
func IsPlatformImage(d v1.Descriptor) bool {
	return d.Platform != nil && !UnknownPlatform(d) && d.MediaType.IsImage() && !IsAttestation(d)
}

// StatementSubjects returns the digests an in-toto statement names as its
// subjects (algorithm:hex). BuildKit's attestation manifest names no
// subject itself: its statements are what says which image it is about.
func StatementSubjects(statement []byte) ([]v1.Hash, error) {
	var st struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return nil, fmt.Errorf("not an in-toto statement: %w", err)
	}
	var out []v1.Hash
	for _, s := range st.Subject {
		for _, alg := range slices.Sorted(maps.Keys(s.Digest)) {
			out = append(out, v1.Hash{Algorithm: alg, Hex: s.Digest[alg]})
		}
	}
	return out, nil
}

// CheckAbout fails unless the in-toto statement names digest among its
// subjects, saying which it names instead.
func CheckAbout(statement []byte, digest v1.Hash) error {
	subjects, err := StatementSubjects(statement)
	if err != nil {
		return err
	}
	if slices.Contains(subjects, digest) {
		return nil
	}
	got := make([]string, len(subjects))
	for i, s := range subjects {
		got[i] = s.String()
	}
	return fmt.Errorf("its subject is [%s], not %s", strings.Join(got, " "), digest)
}
