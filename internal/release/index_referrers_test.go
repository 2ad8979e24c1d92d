package release

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/join"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// statementAbout is an in-toto statement of predicate about subject, the
// build's provenance when predicate is SLSA.
func statementAbout(subject v1.Hash, predicate string) attest.Statement {
	return attest.Statement{PredicateType: predicate, JSON: fmt.Appendf(nil,
		`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"app","digest":{"sha256":%q}}],"predicateType":%q,"predicate":{"buildDefinition":{"buildType":"https://example.com/build/v1"}}}`,
		subject.Hex, predicate)}
}

// pushReferrersSource pushes an amd64 image to host/ref/app:v1 with an
// SBOM and a provenance statement and a plain SPDX document as referrers,
// as push --attest referrers does; it returns the reference, the image's
// digest and the referrers' digests.
func pushReferrersSource(t *testing.T, host string) (string, v1.Hash, []v1.Hash) {
	t.Helper()
	ref := host + "/ref/app:v1"
	img := testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "amd64")
	pushImage(t, ref, img)
	d, err := img.Digest()
	require.NoError(t, err)
	n, err := img.Size()
	require.NoError(t, err)
	mt, err := img.MediaType()
	require.NoError(t, err)
	subject := v1.Descriptor{MediaType: mt, Digest: d, Size: n}
	sbom, err := attest.StatementReferrer(subject, statementAbout(d, attestspec.PredicateSPDX))
	require.NoError(t, err)
	prov, err := attest.StatementReferrer(subject, statementAbout(d, attestspec.PredicateSLSA))
	require.NoError(t, err)
	spdx, err := attest.SPDXReferrer(subject, []byte(`{"spdxVersion":"SPDX-2.3"}`))
	require.NoError(t, err)
	var digests []v1.Hash
	for _, a := range []*attest.Artifact{sbom, prov, spdx} {
		h, err := a.Digest()
		require.NoError(t, err)
		pushImage(t, host+"/ref/app@"+h.String(), a)
		digests = append(digests, h)
	}
	return ref, d, digests
}

// joinTo joins sources with mode and publishes the index to target:v1.
func joinTo(t *testing.T, sources []string, target string, mode product.AttestMode) *Joined {
	t.Helper()
	ctx := context.Background()
	img := imageref.Options{Keychain: authn.NewMultiKeychain(), Insecure: []string{"127.0.0.1"}, Blobs: imageref.NewBlobs(t.TempDir())}
	j, err := JoinIndex(ctx, IndexOptions{Sources: sources, Name: "app", Tags: []string{"v1"},
		Join: join.Options{Images: img, TempDir: t.TempDir()}, Attest: build.Attest{Mode: mode, HelperbuildVersion: "v0.0.0-test"}})
	require.NoError(t, err)
	repo, err := name.NewRepository(target, name.Insecure)
	require.NoError(t, err)
	dest, err := publish.NewRegistry(publish.Placed{"app": {{Repository: repo, Tags: []string{"v1"}}}}, []string{"app"}, img, nil)
	require.NoError(t, err)
	require.NoError(t, dest.Publish(ctx, []publish.Image{j.Result.Images[0].Publish()}))
	return j
}

// referrersAt lists subject's referrers in repo, by digest.
func referrersAt(t *testing.T, repo string, subject v1.Hash) []v1.Hash {
	t.Helper()
	ref, err := name.NewDigest(repo+"@"+subject.String(), name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Referrers(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var out []v1.Hash
	for _, d := range im.Manifests {
		out = append(out, d.Digest)
	}
	return out
}

func TestJoinIndexCopiesReferrersAndMakesOneAttestationManifest(t *testing.T) {
	src := testkit.ReferrersRegistry(t)
	ref, subject, digests := pushReferrersSource(t, src)
	for _, tc := range []struct{ name, host string }{
		{"another registry without the referrers API", testkit.Registry(t)},
		{"another registry with it", testkit.ReferrersRegistry(t)},
		{"another repository", src},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.host + "/other/app"
			j := joinTo(t, []string{ref}, target, product.AttestIndex)
			assert.ElementsMatch(t, digests, referrersAt(t, target, subject), "every referrer copied as it is")
			var buf = new(testkit.Buffer)
			(&Report{Sources: indexReportSources(j.Plan)}).WriteSources(buf)
			assert.Contains(t, buf.String(), " (sha256:"+subject.Hex+"); carried: 0 attestation manifests, 3 referrers\n")

			r, err := name.ParseReference(target+":v1", name.Insecure)
			require.NoError(t, err)
			idx, err := remote.Index(r)
			require.NoError(t, err)
			m, err := idx.IndexManifest()
			require.NoError(t, err)
			require.Len(t, m.Manifests, 2, "the image and its one attestation manifest")
			att := m.Manifests[1]
			require.True(t, attestspec.IsAttestation(att))
			assert.Equal(t, subject.String(), att.Annotations[attestspec.AnnotationReferenceDigest])
			am, err := idx.Image(att.Digest)
			require.NoError(t, err)
			mf, err := am.Manifest()
			require.NoError(t, err)
			var predicates, buildTypes []string
			for _, l := range mf.Layers {
				predicates = append(predicates, l.Annotations[attestspec.AnnotationPredicateType])
				layer, err := am.LayerByDigest(l.Digest)
				require.NoError(t, err)
				rc, err := layer.Compressed()
				require.NoError(t, err)
				var st struct {
					Predicate struct {
						BuildDefinition struct{ BuildType string } `json:"buildDefinition"`
					} `json:"predicate"`
				}
				require.NoError(t, json.NewDecoder(rc).Decode(&st))
				require.NoError(t, rc.Close())
				buildTypes = append(buildTypes, st.Predicate.BuildDefinition.BuildType)
			}
			assert.Equal(t, []string{attestspec.PredicateSPDX, attestspec.PredicateSLSA, attestspec.PredicateSLSA}, predicates,
				"the SBOM, the build's provenance first (buildx shows the first of a manifest), the join's last")
			assert.Equal(t, "https://example.com/build/v1", buildTypes[1])
			md := attestationMetadata(j.Result.Images[0].Platforms[0].Attestation)
			assert.Equal(t, mf.Layers[0].Digest.String(), md.SBOM, "the metadata names the SBOM carried")
			assert.Equal(t, mf.Layers[2].Digest.String(), md.Provenance, "and the join's provenance")
			assert.Equal(t, att.Digest.String(), md.Manifest)
			assert.Equal(t, attest.JoinBuildType, buildTypes[2])

			again := joinTo(t, []string{ref}, target, product.AttestIndex)
			assert.Equal(t, j.Result.Images[0].Digest, again.Result.Images[0].Digest, "the same sources, the same index")
		})
	}
	t.Run("--attest none: the image alone in the index, the referrers copied", func(t *testing.T) {
		target := testkit.Registry(t) + "/other/app"
		j := joinTo(t, []string{ref}, target, product.AttestNone)
		m, err := j.Result.Images[0].Index.IndexManifest()
		require.NoError(t, err)
		assert.Len(t, m.Manifests, 1)
		assert.ElementsMatch(t, digests, referrersAt(t, target, subject))
	})
	t.Run("--attest referrers: the join's provenance beside the copies", func(t *testing.T) {
		target := testkit.Registry(t) + "/other/app"
		j := joinTo(t, []string{ref}, target, product.AttestReferrers)
		got := referrersAt(t, target, subject)
		assert.Len(t, got, len(digests)+1)
		assert.Subset(t, got, append(digests, j.Result.Images[0].Platforms[0].Attestation.Digests.Referrers...))
		assert.Empty(t, attestationMetadata(j.Result.Images[0].Platforms[0].Attestation).SBOM, "a join writes no SBOM of its own")
	})
}

func TestJoinIndexLeavesAFixedImagesReferrersBehind(t *testing.T) {
	src := testkit.ReferrersRegistry(t)
	liar := src + "/ref/liar:v1"
	img := testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "arm64")
	pushImage(t, liar, img)
	d, err := img.Digest()
	require.NoError(t, err)
	n, err := img.Size()
	require.NoError(t, err)
	prov, err := attest.StatementReferrer(v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: d, Size: n},
		statementAbout(d, attestspec.PredicateSLSA))
	require.NoError(t, err)
	h, err := prov.Digest()
	require.NoError(t, err)
	pushImage(t, src+"/ref/liar@"+h.String(), prov)

	ctx := context.Background()
	opts := imageref.Options{Insecure: []string{"127.0.0.1"}, Blobs: imageref.NewBlobs(t.TempDir())}
	j, err := JoinIndex(ctx, IndexOptions{Sources: []string{liar}, Name: "app", Tags: []string{"v1"},
		Join: join.Options{Images: opts, TempDir: t.TempDir(), FixPlatform: true}, Attest: build.Attest{Mode: product.AttestIndex, HelperbuildVersion: "v0.0.0-test"}})
	require.NoError(t, err)
	e := j.Plan.Entries[0]
	require.True(t, e.Fixed)
	assert.Equal(t, 1, e.Dropped, "the provenance about the source's manifest")
	assert.Empty(t, j.Result.Images[0].Publish().Referrers, "nothing about the old digest is copied")
	var buf = new(testkit.Buffer)
	rep := &Report{Sources: indexReportSources(j.Plan)}
	rep.WriteSources(buf)
	assert.Contains(t, buf.String(), "the source's attestations and referrers about it left out: 1")
}
