package attest

import (
	"bytes"
	"fmt"
	"maps"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
)

// Artifact is an OCI image manifest this package wrote as raw JSON (so it
// can carry a manifest-level artifactType, which go-containerregistry's
// mutate cannot set), with a subject, the 2-byte empty config "{}" and
// its blobs as layers. It is a v1.Image: layout.WriteImage and friends
// write it as is. go-containerregistry's remote writers push it too, but
// they also read and write the tag sha256-<subject hex> on a registry
// without the referrers API, for any manifest with a subject; a release
// PUTs the raw manifest itself (docs/attestations.md).
type Artifact struct {
	raw      []byte
	digest   v1.Hash
	manifest *v1.Manifest
	layers   []v1.Layer
	entry    v1.Descriptor
}

var _ v1.Image = (*Artifact)(nil)

// emptyConfig is the empty JSON config blob.
var emptyConfig = static.NewLayer(specsv1.DescriptorEmptyJSON.Data, types.OCIEmptyJSON)

// blob is one layer of an artifact.
type blob struct {
	mediaType   string
	data        []byte
	annotations map[string]string
}

// AttestationManifest returns the attestation manifest of the platform
// manifest subject in BuildKit's layout: artifactType
// attestspec.ArtifactTypeAttestationManifest, the empty config, subject (media type,
// digest and size only) and one application/vnd.in-toto+json layer per
// statement, annotated with its predicate type. IndexEntry is its entry for
// the image index: platform unknown/unknown and the vnd.docker.reference.*
// annotations naming subject.
func AttestationManifest(subject v1.Descriptor, statements ...Statement) (*Artifact, error) {
	if len(statements) == 0 {
		return nil, fmt.Errorf("attestation manifest for %s: no statements", subject.Digest)
	}
	blobs := make([]blob, len(statements))
	for i, s := range statements {
		if s.PredicateType == "" || len(s.JSON) == 0 {
			return nil, fmt.Errorf("attestation manifest for %s: statement %d is empty", subject.Digest, i)
		}
		blobs[i] = blob{mediaType: attestspec.MediaTypeInToto, data: s.JSON, annotations: map[string]string{attestspec.AnnotationPredicateType: s.PredicateType}}
	}
	a, err := newArtifact(subject, attestspec.ArtifactTypeAttestationManifest, nil, blobs)
	if err != nil {
		return nil, err
	}
	a.entry.Platform = &v1.Platform{OS: "unknown", Architecture: "unknown"}
	a.entry.Annotations = map[string]string{
		attestspec.AnnotationReferenceType:   attestspec.ReferenceTypeAttestation,
		attestspec.AnnotationReferenceDigest: subject.Digest.String(),
	}
	a.entry.ArtifactType = ""
	return a, nil
}

// StatementReferrer returns s as an OCI 1.1 referrer of subject: artifactType
// application/vnd.in-toto+json, the empty config, one layer (the
// statement) and the predicate type as a manifest annotation, so that a
// referrers listing can be filtered by it. IndexEntry is its entry in a
// referrers index.
func StatementReferrer(subject v1.Descriptor, s Statement) (*Artifact, error) {
	if s.PredicateType == "" || len(s.JSON) == 0 {
		return nil, fmt.Errorf("referrer of %s: empty statement", subject.Digest)
	}
	ann := map[string]string{attestspec.AnnotationPredicateType: s.PredicateType}
	return newArtifact(subject, attestspec.MediaTypeInToto, ann, []blob{{mediaType: attestspec.MediaTypeInToto, data: s.JSON, annotations: ann}})
}

// SPDXReferrer returns an SPDX document (SBOM's output) as a plain OCI 1.1
// referrer of subject: artifactType application/spdx+json, the empty
// config and the document as its one layer. IndexEntry is its entry in a
// referrers index.
func SPDXReferrer(subject v1.Descriptor, spdxJSON []byte) (*Artifact, error) {
	if len(spdxJSON) == 0 {
		return nil, fmt.Errorf("SPDX referrer of %s: empty document", subject.Digest)
	}
	return newArtifact(subject, attestspec.MediaTypeSPDX, nil, []blob{{mediaType: attestspec.MediaTypeSPDX, data: spdxJSON}})
}

// newArtifact writes the manifest. Its JSON comes from image-spec's
// Manifest, the type BuildKit marshals, so fields appear in the same order.
func newArtifact(subject v1.Descriptor, artifactType string, annotations map[string]string, blobs []blob) (*Artifact, error) {
	if subject.Digest == (v1.Hash{}) || subject.MediaType == "" || subject.Size <= 0 {
		return nil, fmt.Errorf("artifact subject %s: want a media type, digest and size", subject.Digest)
	}
	m := specsv1.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    specsv1.MediaTypeImageManifest,
		ArtifactType: artifactType,
		Config:       specsv1.DescriptorEmptyJSON,
		Layers:       make([]specsv1.Descriptor, len(blobs)),
		Subject: &specsv1.Descriptor{
			MediaType: string(subject.MediaType),
			Digest:    digest.Digest(subject.Digest.String()),
			Size:      subject.Size,
		},
		Annotations: annotations,
	}
	layers := make([]v1.Layer, len(blobs))
	for i, b := range blobs {
		l := static.NewLayer(b.data, types.MediaType(b.mediaType))
		h, err := l.Digest()
		if err != nil {
			return nil, err
		}
		layers[i] = l
		m.Layers[i] = specsv1.Descriptor{MediaType: b.mediaType, Digest: digest.Digest(h.String()), Size: int64(len(b.data)), Annotations: b.annotations}
	}
	raw, err := marshal(m)
	if err != nil {
		return nil, err
	}
	h, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	parsed, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return &Artifact{
		raw:      raw,
		digest:   h,
		manifest: parsed,
		layers:   layers,
		entry: v1.Descriptor{
			MediaType:    types.OCIManifestSchema1,
			Size:         size,
			Digest:       h,
			ArtifactType: artifactType,
			Annotations:  annotations,
		},
	}, nil
}

// IndexEntry is how an index lists the artifact: for an attestation
// manifest its entry in the image index, for a referrer its entry in a
// referrers index (artifactType and the manifest's annotations).
func (a *Artifact) IndexEntry() v1.Descriptor {
	d := a.entry
	if d.Platform != nil {
		p := *d.Platform
		d.Platform = &p
	}
	if d.Annotations != nil {
		d.Annotations = maps.Clone(d.Annotations)
	}
	return d
}

func (a *Artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *Artifact) Size() (int64, error)                { return int64(len(a.raw)), nil }
func (a *Artifact) Digest() (v1.Hash, error)            { return a.digest, nil }
func (a *Artifact) RawManifest() ([]byte, error)        { return bytes.Clone(a.raw), nil }
func (a *Artifact) Manifest() (*v1.Manifest, error)     { return a.manifest.DeepCopy(), nil }
func (a *Artifact) Layers() ([]v1.Layer, error)         { return append([]v1.Layer(nil), a.layers...), nil }
func (a *Artifact) ConfigLayer() (v1.Layer, error)      { return emptyConfig, nil }
func (a *Artifact) RawConfigFile() ([]byte, error) {
	return bytes.Clone(specsv1.DescriptorEmptyJSON.Data), nil
}

// ConfigName is the empty config's digest.
func (a *Artifact) ConfigName() (v1.Hash, error) {
	return v1.NewHash(specsv1.DescriptorEmptyJSON.Digest.String())
}

// ConfigFile is the empty config parsed: every field zero.
func (a *Artifact) ConfigFile() (*v1.ConfigFile, error) { return &v1.ConfigFile{}, nil }

// LayerByDigest returns a layer or the config blob by digest.
func (a *Artifact) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	if c, _ := a.ConfigName(); h == c {
		return emptyConfig, nil
	}
	for _, l := range a.layers {
		if d, _ := l.Digest(); d == h {
			return l, nil
		}
	}
	return nil, fmt.Errorf("artifact %s has no blob %s", a.digest, h)
}

// LayerByDiffID is LayerByDigest: the layers are not compressed.
func (a *Artifact) LayerByDiffID(h v1.Hash) (v1.Layer, error) { return a.LayerByDigest(h) }
