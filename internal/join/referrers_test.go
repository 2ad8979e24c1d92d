package join

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// bundleFor is a cosign-bundle-like referrer of subject: its config media
// type is the artifact type a registry lists.
func bundleFor(t *testing.T, subject v1.Descriptor) v1.Image {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.dev.sigstore.bundle.v0.3+json")
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`), "application/vnd.dev.sigstore.bundle.v0.3+json")})
	require.NoError(t, err)
	return mutate.Subject(img, subject).(v1.Image)
}

// pushWithReferrers pushes img as host/repo:v1 and an attestation and a
// bundle about it (go-containerregistry writes the fallback tag where the
// registry has no referrers API); it returns the reference, the image's
// descriptor and the referrers' digests.
func pushWithReferrers(t *testing.T, host, repo string, img v1.Image) (string, v1.Descriptor, []v1.Hash) {
	t.Helper()
	ref := push(t, host, repo, "v1", img)
	desc, err := partialDescriptor(img)
	require.NoError(t, err)
	var digests []v1.Hash
	for _, r := range []v1.Image{attestationFor(t, desc), bundleFor(t, desc)} {
		d, err := r.Digest()
		require.NoError(t, err)
		dr, err := name.NewDigest(host+"/"+repo+"@"+d.String(), name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(dr, r))
		digests = append(digests, d)
	}
	return ref, desc, digests
}

func partialDescriptor(img v1.Image) (v1.Descriptor, error) {
	d, err := img.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	n, err := img.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := img.MediaType()
	return v1.Descriptor{MediaType: mt, Digest: d, Size: n}, err
}

func TestPlanReadsEachImagesReferrers(t *testing.T) {
	for _, tc := range []struct{ name, host string }{
		{"referrers API", testkit.ReferrersRegistry(t)},
		{"fallback tag", testkit.Registry(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, desc, digests := pushWithReferrers(t, tc.host, "ref/app", archImage(t, "amd64", "", "amd64"))
			plan, err := New(context.Background(), []string{ref}, opts(t))
			require.NoError(t, err)
			require.Len(t, plan.Entries, 1)
			e := plan.Entries[0]
			assert.Equal(t, desc.Digest, e.Descriptor.Digest)
			var got []v1.Hash
			for _, r := range e.Referrers {
				got = append(got, r.Descriptor.Digest)
				m, err := r.Manifest.Manifest()
				require.NoError(t, err)
				require.NotNil(t, m.Subject, "the referrer as the source keeps it")
				assert.Equal(t, desc.Digest, m.Subject.Digest)
			}
			assert.ElementsMatch(t, digests, got)
			require.Len(t, got, 2)
			assert.Less(t, got[0].String(), got[1].String(), "sorted by digest")
		})
	}
	t.Run("cosign's .sig tag comes along", func(t *testing.T) {
		host := testkit.Registry(t)
		img := archImage(t, "amd64", "", "amd64")
		ref := push(t, host, "ref/app", "v1", img)
		d, err := img.Digest()
		require.NoError(t, err)
		sig := push(t, host, "ref/app", "sha256-"+d.Hex+".sig", bundleFor(t, v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: 1}))
		plan, err := New(context.Background(), []string{ref}, opts(t))
		require.NoError(t, err)
		require.Len(t, plan.Entries[0].Tagged, 1, "no .att tag: one")
		assert.Equal(t, "sha256-"+d.Hex+".sig", plan.Entries[0].Tagged[0].Tag)
		got, err := plan.Entries[0].Tagged[0].Image.Digest()
		require.NoError(t, err)
		want, err := remote.Head(testkit.Ref(t, sig))
		require.NoError(t, err)
		assert.Equal(t, want.Digest, got)
	})
	t.Run("a registry resolving sha256-<hex> to the subject keeps none there", func(t *testing.T) {
		host := testkit.Registry(t, testkit.ResolvesDigestTags)
		ref := push(t, host, "ref/app", "v1", archImage(t, "amd64", "", "amd64"))
		plan, err := New(context.Background(), []string{ref}, opts(t))
		require.NoError(t, err)
		assert.Empty(t, plan.Entries[0].Referrers)
	})
	t.Run("a fixed image leaves its referrers behind and counts them", func(t *testing.T) {
		host := testkit.ReferrersRegistry(t)
		ref, _, _ := pushWithReferrers(t, host, "ref/liar", archImage(t, "amd64", "", "arm64"))
		o := opts(t)
		o.FixPlatform = true
		plan, err := New(context.Background(), []string{ref}, o)
		require.NoError(t, err)
		e := plan.Entries[0]
		assert.True(t, e.Fixed)
		assert.Empty(t, e.Referrers)
		assert.Equal(t, 2, e.Dropped)
	})
}
