package attest

import (
	"bytes"
	"fmt"
	"io"
	"maps"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Artifact is an OCI image manifest this package wrote as raw JSON, with
// its config and its blobs as layers. It is a v1.Image: layout.WriteImage
// and friends write it as is.
//
// An attestation manifest (AttestationManifest) is BuildKit's default
// form: an image config for the platform unknown/unknown, no subject, no
// artifactType, so that skopeo, regctl and every tool reading buildx's
// attestations read it. A referrer (StatementReferrer, SPDXReferrer) is
// the OCI 1.1 form: the empty config, a manifest-level artifactType (which
// go-containerregistry's mutate cannot set) and a subject.
// go-containerregistry's remote writers push a manifest with a subject,
// but they also read and write the tag sha256-<subject hex> on a registry
// without the referrers API; a release PUTs such a raw manifest itself
// (docs/attestations.md).
type Artifact struct {
	raw      []byte
	digest   v1.Hash
	manifest *v1.Manifest
	config   v1.Layer
	layers   []v1.Layer
	entry    v1.Descriptor
}

var _ v1.Image = (*Artifact)(nil)

// emptyConfig is the empty JSON config blob of a referrer.
var emptyConfig = static.NewLayer(specsv1.DescriptorEmptyJSON.Data, types.OCIEmptyJSON)

// blob is one layer of an artifact.
type blob struct {
	mediaType   string
	data        []byte
	annotations map[string]string
}

// unknownPlatform is the platform of an attestation manifest, in its
// config and its index entry: no runtime selects it.
var unknownPlatform = specsv1.Platform{OS: "unknown", Architecture: "unknown"}

// AttestationManifest returns the attestation manifest of the platform
// manifest subject in BuildKit's default form (exporter/containerimage,
// commitAttestationsManifest without oci-artifact): an OCI image manifest
// whose config is an image config for unknown/unknown, and one
// application/vnd.in-toto+json layer per statement, annotated with its
// predicate type; no subject, no artifactType. One departure: BuildKit's
// config lists each statement as a diff ID, ours lists none. The
// statements are no filesystem layers, BuildKit's docs say the config is
// to be ignored, and go-containerregistry's validate (crane validate)
// refuses diff IDs for blobs that are not layers.
// IndexEntry is its entry for the image index: platform unknown/unknown
// and the vnd.docker.reference.* annotations naming subject, which are
// all that ties it to subject.
func AttestationManifest(subject v1.Descriptor, statements ...Statement) (*Artifact, error) {
	if err := checkSubjectDescriptor(subject); err != nil {
		return nil, err
	}
	if len(statements) == 0 {
		return nil, fmt.Errorf("attestation manifest for %s: no statements", subject.Digest)
	}
	blobs := make([]blob, len(statements))
	cfg := specsv1.Image{Platform: unknownPlatform, RootFS: specsv1.RootFS{Type: "layers", DiffIDs: []digest.Digest{}}}
	for i, s := range statements {
		if s.PredicateType == "" || len(s.JSON) == 0 {
			return nil, fmt.Errorf("attestation manifest for %s: statement %d is empty", subject.Digest, i)
		}
		blobs[i] = blob{mediaType: attestspec.MediaTypeInToto, data: s.JSON, annotations: map[string]string{attestspec.AnnotationPredicateType: s.PredicateType}}
	}
	cfgJSON, err := marshal(cfg)
	if err != nil {
		return nil, err
	}
	a, err := newArtifact(specsv1.Manifest{}, static.NewLayer(cfgJSON, types.OCIConfigJSON), blobs)
	if err != nil {
		return nil, err
	}
	a.entry.Platform = &v1.Platform{OS: unknownPlatform.OS, Architecture: unknownPlatform.Architecture}
	a.entry.Annotations = map[string]string{
		attestspec.AnnotationReferenceType:   attestspec.ReferenceTypeAttestation,
		attestspec.AnnotationReferenceDigest: subject.Digest.String(),
	}
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
	return newReferrer(subject, attestspec.MediaTypeInToto, ann, []blob{{mediaType: attestspec.MediaTypeInToto, data: s.JSON, annotations: ann}})
}

// SPDXReferrer returns an SPDX document (SBOM's output) as a plain OCI 1.1
// referrer of subject: artifactType application/spdx+json, the empty
// config and the document as its one layer. IndexEntry is its entry in a
// referrers index.
func SPDXReferrer(subject v1.Descriptor, spdxJSON []byte) (*Artifact, error) {
	if len(spdxJSON) == 0 {
		return nil, fmt.Errorf("SPDX referrer of %s: empty document", subject.Digest)
	}
	return newReferrer(subject, attestspec.MediaTypeSPDX, nil, []blob{{mediaType: attestspec.MediaTypeSPDX, data: spdxJSON}})
}

func checkSubjectDescriptor(subject v1.Descriptor) error {
	if subject.Digest == (v1.Hash{}) || subject.MediaType == "" || subject.Size <= 0 {
		return fmt.Errorf("artifact subject %s: want a media type, digest and size", subject.Digest)
	}
	return nil
}

// newReferrer writes an OCI 1.1 referrer of subject: the empty config,
// artifactType, the subject (media type, digest and size only).
func newReferrer(subject v1.Descriptor, artifactType string, annotations map[string]string, blobs []blob) (*Artifact, error) {
	if err := checkSubjectDescriptor(subject); err != nil {
		return nil, err
	}
	a, err := newArtifact(specsv1.Manifest{
		ArtifactType: artifactType,
		Subject: &specsv1.Descriptor{
			MediaType: string(subject.MediaType),
			Digest:    digest.Digest(subject.Digest.String()),
			Size:      subject.Size,
		},
		Annotations: annotations,
	}, emptyConfig, blobs)
	if err != nil {
		return nil, err
	}
	a.entry.ArtifactType, a.entry.Annotations = artifactType, annotations
	return a, nil
}

// newArtifact completes m (artifactType, subject and annotations already
// set) with config and blobs and writes it. Its JSON comes from
// image-spec's Manifest, the type BuildKit marshals, so fields appear in
// the same order.
func newArtifact(m specsv1.Manifest, config v1.Layer, blobs []blob) (*Artifact, error) {
	m.Versioned = specs.Versioned{SchemaVersion: 2}
	m.MediaType = specsv1.MediaTypeImageManifest
	var err error
	if m.Config, err = specDescriptor(config); err != nil {
		return nil, err
	}
	if config == emptyConfig {
		m.Config.Data = specsv1.DescriptorEmptyJSON.Data
	}
	m.Layers = make([]specsv1.Descriptor, len(blobs))
	layers := make([]v1.Layer, len(blobs))
	for i, b := range blobs {
		layers[i] = static.NewLayer(b.data, types.MediaType(b.mediaType))
		if m.Layers[i], err = specDescriptor(layers[i]); err != nil {
			return nil, err
		}
		m.Layers[i].Annotations = b.annotations
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
		config:   config,
		layers:   layers,
		entry:    v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: size, Digest: h},
	}, nil
}

// specDescriptor is imageref.Describe of the static blob l in
// image-spec's type, which an artifact's manifest is marshalled from.
func specDescriptor(l v1.Layer) (specsv1.Descriptor, error) {
	d, err := imageref.Describe(l)
	if err != nil {
		return specsv1.Descriptor{}, err
	}
	return specsv1.Descriptor{MediaType: string(d.MediaType), Digest: digest.Digest(d.Digest.String()), Size: d.Size}, nil
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
func (a *Artifact) ConfigLayer() (v1.Layer, error)      { return a.config, nil }

// RawConfigFile is the config blob: an image config for unknown/unknown
// (an attestation manifest) or "{}" (a referrer).
func (a *Artifact) RawConfigFile() ([]byte, error) {
	rc, err := a.config.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc) // a static blob in memory
}

// ConfigName is the config blob's digest.
func (a *Artifact) ConfigName() (v1.Hash, error) { return a.config.Digest() }

// ConfigFile is the config parsed (every field zero for a referrer's "{}").
func (a *Artifact) ConfigFile() (*v1.ConfigFile, error) {
	raw, err := a.RawConfigFile()
	if err != nil {
		return nil, err
	}
	return v1.ParseConfigFile(bytes.NewReader(raw))
}

// LayerByDigest returns a layer or the config blob by digest.
func (a *Artifact) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	if c, _ := a.ConfigName(); h == c {
		return a.config, nil
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
