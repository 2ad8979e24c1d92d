package merge

import (
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
)

const fivePlatforms = "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x"

var epoch = time.Unix(1700000000, 0).UTC()

// fanOut is testkit's fan-out as this package's tests use it.
type fanOut struct{ *testkit.FanOut }

// annotations are the index annotations a release's push writes (those
// of manifest.Meta, spelled out: a stage's tests import no other stage).
func annotations() map[string]string {
	return map[string]string{
		specsv1.AnnotationCreated:  epoch.Format(time.RFC3339),
		specsv1.AnnotationRevision: "abc",
		specsv1.AnnotationVersion:  "v1.2.3",
		specsv1.AnnotationSource:   "https://example.com/r",
	}
}

// newFanOut is testkit.NewFanOut with this package's release facts and,
// with attestations, an attestation manifest made by hand per image.
func newFanOut(t *testing.T, ps string, attestations bool, names ...string) *fanOut {
	t.Helper()
	jobs := testkit.FanOutJobs{Created: epoch, Version: "v1.2.3", Revision: "abc", Annotations: annotations}
	if attestations {
		jobs.Attest = pushAttestation
	}
	return &fanOut{testkit.NewFanOut(t, ps, jobs, names...)}
}

func (f *fanOut) options() Options {
	return Options{Images: imageref.Options{Insecure: []string{f.Host}}, ConfigAgrees: sameOSAndArch}
}

// sameOSAndArch is a config check for the tests: the config's OS,
// architecture and variant are the entry's.
func sameOSAndArch(cf *v1.ConfigFile, p v1.Platform) (bool, string) {
	said := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
	if said.OS != p.OS || said.Architecture != p.Architecture || said.Variant != p.Variant {
		return false, "config says " + platform.Format(said) + " but the index lists it as " + platform.Format(p)
	}
	return true, ""
}

// pushAttestation writes a BuildKit-style attestation manifest about the
// image subject of image n (an SPDX statement naming it) to repo, and
// returns its index entry.
func pushAttestation(t *testing.T, repo name.Repository, n string, subject v1.Descriptor) v1.Descriptor {
	t.Helper()
	st := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"` + n + `","digest":{"sha256":"` + subject.Digest.Hex + `"}}],"predicateType":"` + attestspec.PredicateSPDX + `","predicate":{}}`
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(st), attestspec.MediaTypeInToto), MediaType: attestspec.MediaTypeInToto,
		Annotations: map[string]string{attestspec.AnnotationPredicateType: attestspec.PredicateSPDX}})
	require.NoError(t, err)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "unknown", Architecture: "unknown"})
	require.NoError(t, err)
	d := testkit.PushByDigest(t, repo, img, &v1.Platform{OS: "unknown", Architecture: "unknown"})
	d.Annotations = map[string]string{attestspec.AnnotationReferenceType: attestspec.ReferenceTypeAttestation,
		attestspec.AnnotationReferenceDigest: subject.Digest.String()}
	return d
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
