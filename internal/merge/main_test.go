package merge

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
)

const fivePlatforms = "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x"

var epoch = time.Unix(1700000000, 0).UTC()

// fanOut is a release of images over platforms whose jobs pushed by
// digest to an in-process registry: the images, and each job's part.
type fanOut struct {
	host      string
	log       *testkit.RequestLog
	platforms []v1.Platform
	names     []string
	images    map[string][]v1.Image // image name -> per platform
	parts     []*part.File          // one per platform, in platform order
}

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

// newFanOut pushes, for each platform, one image of each name (and, with
// attestations, its attestation manifest) to REGISTRY/jobs/NAME, and
// writes the part that platform's job would.
func newFanOut(t *testing.T, ps string, attestations bool, names ...string) *fanOut {
	t.Helper()
	list, err := platform.ParseList(ps)
	require.NoError(t, err)
	f := &fanOut{log: &testkit.RequestLog{}, platforms: list, names: names, images: map[string][]v1.Image{}}
	f.host = testkit.Registry(t, f.log.Wrap)
	for k, p := range f.platforms {
		pf := &part.File{SchemaVersion: part.SchemaVersion, MediaType: part.MediaType, Path: "parts/" + platform.GitLabArch(p) + ".json",
			Job:     &part.Job{ID: string(rune('1' + k)), Name: "build: [" + platform.Format(p) + "]"},
			Version: "v1.2.3", Revision: "abc", Created: epoch, Platforms: strings.Split(ps, ","),
			Recipe: &part.Recipe{Path: "helperbuild.yaml", Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}}}
		for _, n := range names {
			img := testkit.Image(t, p, 512, 2)
			f.images[n] = append(f.images[n], img)
			repo := f.repo(t, "jobs/"+n)
			d := push(t, repo, img, &p)
			pi := part.Image{Name: n, Repository: repo.String(), Annotations: annotations(),
				Tags: []string{"v1.2.3", "latest"}, Manifests: []v1.Descriptor{d},
				PlatformTags: []part.PlatformTag{{Platform: platform.Format(p), Digest: d.Digest, Tag: platform.GitLabArch(p) + "-v1.2.3"}}}
			if attestations {
				pi.Manifests = append(pi.Manifests, pushAttestation(t, repo, n, d))
			}
			pf.Images = append(pf.Images, pi)
		}
		f.parts = append(f.parts, pf)
	}
	f.log.Take()
	return f
}

func (f *fanOut) repo(t *testing.T, path string) name.Repository {
	r, err := name.NewRepository(f.host+"/"+path, name.Insecure)
	require.NoError(t, err)
	return r
}

func (f *fanOut) options() Options {
	return Options{Images: imageref.Options{Insecure: []string{f.host}}, ConfigAgrees: sameOSAndArch}
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

// push writes img to repo by digest; its descriptor names p.
func push(t *testing.T, repo name.Repository, img v1.Image, p *v1.Platform) v1.Descriptor {
	t.Helper()
	d, err := img.Digest()
	require.NoError(t, err)
	require.NoError(t, remote.Write(repo.Digest(d.String()), img))
	size, err := img.Size()
	require.NoError(t, err)
	mt, err := img.MediaType()
	require.NoError(t, err)
	return v1.Descriptor{MediaType: mt, Digest: d, Size: size, Platform: p}
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
	d := push(t, repo, img, &v1.Platform{OS: "unknown", Architecture: "unknown"})
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
