package sign

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// Media types and annotations of cosign's two formats.
const (
	// MediaTypeBundle is a Sigstore bundle v0.3: the referrer's
	// artifactType and its one layer's media type.
	MediaTypeBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// MediaTypeSimpleSigning is a legacy signature layer's media type.
	MediaTypeSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
	// MediaTypeLegacyReferrer is the artifactType (and config media type)
	// of a legacy signature as an OCI 1.1 referrer (LegacyReferrer).
	MediaTypeLegacyReferrer = "application/vnd.dev.cosign.artifact.sig.v1+json"
	// AnnotationSignature holds a legacy layer's base64 signature.
	AnnotationSignature = "dev.cosignproject.cosign/signature"
	// AnnotationCertificate and AnnotationChain hold its certificates (PEM).
	AnnotationCertificate = "dev.sigstore.cosign/certificate"
	AnnotationChain       = "dev.sigstore.cosign/chain"
	// AnnotationBundleContent and AnnotationBundlePredicate describe a
	// bundle referrer, as cosign writes them.
	AnnotationBundleContent   = "dev.sigstore.bundle.content"
	AnnotationBundlePredicate = "dev.sigstore.bundle.predicateType"
)

// LegacyTag is where cosign keeps the legacy signatures of subject:
// sha256-<hex>.sig.
func LegacyTag(subject v1.Hash) string { return subject.Algorithm + "-" + subject.Hex + ".sig" }

// Referrer is a bundle as an OCI 1.1 referrer manifest, as cosign v3
// writes it: artifactType MediaTypeBundle, the empty config, the bundle as
// its one layer, subject, cosign's annotations.
type Referrer struct {
	v1.Image
	// Entry is its descriptor in a referrers index.
	Entry v1.Descriptor
}

// BundleReferrer wraps bundleJSON (from Signer.Bundle) as a referrer of
// subject, created at created.
func BundleReferrer(subject v1.Descriptor, bundleJSON []byte, created time.Time) (*Referrer, error) {
	ann := map[string]string{
		AnnotationBundleContent:   "dsse-envelope",
		AnnotationBundlePredicate: CosignPredicate,
		specsv1.AnnotationCreated: created.UTC().Format(time.RFC3339),
	}
	layer := static.NewLayer(bundleJSON, MediaTypeBundle)
	return referrer(subject, MediaTypeBundle, specsv1.DescriptorEmptyJSON, layer, nil, ann)
}

// LegacyReferrer is sig in cosign's legacy format as an OCI 1.1 referrer
// of subject, as cosign sign --registry-referrers-mode=oci-1-1 (its
// experimental OCI 1.1 mode) writes it: artifactType and config media type
// MediaTypeLegacyReferrer, the simple-signing payload as the one layer
// with the signature (and certificate) as its annotations. cosign verify
// --experimental-oci11 reads it; so does GitLab's registry, which lists it
// as the subject's signature.
func LegacyReferrer(subject v1.Descriptor, sig Legacy) (*Referrer, error) {
	cfg := specsv1.DescriptorEmptyJSON
	cfg.MediaType = MediaTypeLegacyReferrer
	layer := static.NewLayer(sig.Payload, MediaTypeSimpleSigning)
	return referrer(subject, MediaTypeLegacyReferrer, cfg, layer, legacyAnnotations(sig), nil)
}

// referrer is a manifest of artifactType over the config cfg (the empty
// JSON object, whatever its media type) and the one layer (annotated
// layerAnn) whose subject is subject.
func referrer(subject v1.Descriptor, artifactType string, cfg specsv1.Descriptor, layer v1.Layer, layerAnn, ann map[string]string) (*Referrer, error) {
	if subject.Digest == (v1.Hash{}) || subject.MediaType == "" || subject.Size <= 0 {
		return nil, fmt.Errorf("signature subject %s: want a media type, digest and size", subject.Digest)
	}
	ld, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	size, err := layer.Size()
	if err != nil {
		return nil, err
	}
	mt, err := layer.MediaType()
	if err != nil {
		return nil, err
	}
	m := specsv1.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    specsv1.MediaTypeImageManifest,
		ArtifactType: artifactType,
		Config:       cfg,
		Layers:       []specsv1.Descriptor{{MediaType: string(mt), Digest: digest.Digest(ld.String()), Size: size, Annotations: layerAnn}},
		Subject:      &specsv1.Descriptor{MediaType: string(subject.MediaType), Digest: digest.Digest(subject.Digest.String()), Size: subject.Size},
		Annotations:  ann,
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	img, err := partial.CompressedToImage(&rawImage{raw: raw, layer: layer})
	if err != nil {
		return nil, err
	}
	h, n, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return &Referrer{Image: img, Entry: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: n, ArtifactType: artifactType, Annotations: ann}}, nil
}

// rawImage is a manifest written as raw JSON (go-containerregistry's
// mutate cannot set a manifest's artifactType) over the empty config and
// one layer.
type rawImage struct {
	raw   []byte
	layer v1.Layer
}

var emptyConfig = static.NewLayer(specsv1.DescriptorEmptyJSON.Data, types.OCIEmptyJSON)

func (r *rawImage) RawConfigFile() ([]byte, error) {
	return bytes.Clone(specsv1.DescriptorEmptyJSON.Data), nil
}
func (r *rawImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (r *rawImage) RawManifest() ([]byte, error)        { return bytes.Clone(r.raw), nil }
func (r *rawImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, _ := emptyConfig.Digest(); d == h {
		return emptyConfig, nil
	}
	if d, _ := r.layer.Digest(); d == h {
		return r.layer, nil
	}
	return nil, fmt.Errorf("blob %s not in the signature manifest", h)
}

// legacyAnnotations are a legacy signature layer's annotations: the
// signature, and keyless its certificate and chain.
func legacyAnnotations(sig Legacy) map[string]string {
	ann := map[string]string{AnnotationSignature: base64.StdEncoding.EncodeToString(sig.Signature)}
	if len(sig.CertPEM) > 0 {
		ann[AnnotationCertificate] = string(sig.CertPEM)
		ann[AnnotationChain] = string(sig.ChainPEM)
	}
	if sig.RekorBundle != "" {
		ann[AnnotationRekorBundle] = sig.RekorBundle
	}
	return ann
}

// AppendLegacy adds sig as a layer to cosign's signature image base (nil:
// a new one), as cosign sign does: the payload as the layer, the signature
// and certificate as its annotations. A layer base already has (the same
// payload, signature and certificate) is not added twice.
func AppendLegacy(base v1.Image, sig Legacy) (v1.Image, error) {
	if base == nil {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	ann := legacyAnnotations(sig)
	layer := static.NewLayer(sig.Payload, MediaTypeSimpleSigning)
	m, err := base.Manifest()
	if err != nil {
		return nil, err
	}
	d, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	for _, l := range m.Layers {
		if l.Digest == d && l.Annotations[AnnotationSignature] == ann[AnnotationSignature] {
			return base, nil
		}
	}
	return mutate.Append(base, mutate.Addendum{Layer: layer, Annotations: ann, MediaType: MediaTypeSimpleSigning})
}
