package sign

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// TestLegacyReferrerIsCosignsOCI11Form: the manifest has cosign's
// artifactType as its artifactType and config media type, the subject,
// and the simple-signing payload as its one layer with the signature as
// its annotation; that signature verifies.
func TestLegacyReferrerIsCosignsOCI11Form(t *testing.T) {
	priv, pub := cosignKey(t, "pw")
	s := keySigner(t, priv, "pw")
	l, err := s.Legacy(context.Background(), "registry.example/g/helper", subject)
	if err != nil {
		t.Fatal(err)
	}
	sub := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: subject, Size: 1234}
	r, err := LegacyReferrer(sub, l)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		MediaType    string          `json:"mediaType"`
		ArtifactType string          `json:"artifactType"`
		Config       v1.Descriptor   `json:"config"`
		Layers       []v1.Descriptor `json:"layers"`
		Subject      *v1.Descriptor  `json:"subject"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != MediaTypeLegacyReferrer || string(m.Config.MediaType) != MediaTypeLegacyReferrer || m.MediaType != string(types.OCIManifestSchema1) {
		t.Errorf("artifactType %q, config %q, mediaType %q:\n%s", m.ArtifactType, m.Config.MediaType, m.MediaType, raw)
	}
	if m.Subject == nil || m.Subject.Digest != subject || m.Subject.Size != 1234 || m.Subject.MediaType != types.OCIImageIndex {
		t.Errorf("subject %+v", m.Subject)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != MediaTypeSimpleSigning {
		t.Fatalf("layers %+v", m.Layers)
	}
	if got := m.Layers[0].Annotations[AnnotationSignature]; got != base64.StdEncoding.EncodeToString(l.Signature) {
		t.Errorf("signature annotation %q", got)
	}
	if d, _ := r.Digest(); d != r.Entry.Digest || r.Entry.ArtifactType != MediaTypeLegacyReferrer {
		t.Errorf("entry %+v, manifest digest %s", r.Entry, d)
	}
	layer, err := r.LayerByDigest(m.Layers[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	p, err := imageref.ReadBlob(layer, maxSignatureBlob)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyVerifier(t, pub).VerifyLegacy(p, m.Layers[0].Annotations[AnnotationSignature], "", subject); err != nil {
		t.Errorf("the referrer's signature: %v", err)
	}
	if _, err := LegacyReferrer(v1.Descriptor{Digest: subject}, l); err == nil {
		t.Error("a subject without media type and size is refused")
	}
}
