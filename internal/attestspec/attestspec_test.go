package attestspec

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
)

func TestEntryKinds(t *testing.T) {
	amd64 := &v1.Platform{OS: "linux", Architecture: "amd64"}
	unknown := &v1.Platform{OS: "unknown", Architecture: "unknown"}
	mark := map[string]string{AnnotationReferenceType: ReferenceTypeAttestation, AnnotationReferenceDigest: "sha256:00"}
	tests := []struct {
		name                  string
		d                     v1.Descriptor
		attestation, platform bool
	}{
		{"platform image", v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: amd64}, false, true},
		{"docker platform image", v1.Descriptor{MediaType: types.DockerManifestSchema2, Platform: amd64}, false, true},
		{"BuildKit attestation", v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: unknown, Annotations: mark}, true, false},
		// The annotation is the mark, not the platform.
		{"annotated with a real platform", v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: amd64, Annotations: mark}, true, false},
		{"unknown/unknown without the annotation", v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: unknown}, false, false},
		{"reference digest without the type", v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: unknown,
			Annotations: map[string]string{AnnotationReferenceDigest: "sha256:00"}}, false, false},
		{"other reference type", v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: amd64,
			Annotations: map[string]string{AnnotationReferenceType: "signature"}}, false, true},
		{"no platform", v1.Descriptor{MediaType: types.OCIManifestSchema1}, false, false},
		{"nested index", v1.Descriptor{MediaType: types.OCIImageIndex, Platform: amd64}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.attestation, IsAttestation(tt.d), "IsAttestation")
			assert.Equal(t, tt.platform, IsPlatformImage(tt.d), "IsPlatformImage")
		})
	}
}
