package publish

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// fakeSigner stands in for sign: it writes a referrer or a .sig layer
// naming the subject, or fails.
type fakeSigner struct {
	fail  error
	calls []string
}

func (f *fakeSigner) Referrer(_ context.Context, _ name.Repository, subject v1.Descriptor) (Referrer, error) {
	f.calls = append(f.calls, "bundle "+subject.Digest.String())
	if f.fail != nil {
		return Referrer{}, f.fail
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, static.NewLayer([]byte("bundle of "+subject.Digest.String()), "application/vnd.dev.sigstore.bundle.v0.3+json"))
	if err != nil {
		return Referrer{}, err
	}
	img = mutate.Subject(img, subject).(v1.Image)
	d, _ := img.Digest()
	size, _ := img.Size()
	return Referrer{Subject: subject.Digest, Manifest: img, Entry: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size, ArtifactType: "application/vnd.dev.sigstore.bundle.v0.3+json"}}, nil
}

func (f *fakeSigner) AppendLegacy(_ context.Context, _ name.Repository, subject v1.Hash, base v1.Image) (v1.Image, error) {
	f.calls = append(f.calls, "legacy "+subject.String())
	if f.fail != nil {
		return nil, f.fail
	}
	if base == nil {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	return mutate.AppendLayers(base, static.NewLayer([]byte("signature of "+subject.String()), "application/vnd.dev.cosign.simplesigning.v1+json"))
}

func (f *fakeSigner) LegacyReferrer(_ context.Context, _ name.Repository, subject v1.Descriptor) (Referrer, error) {
	f.calls = append(f.calls, "legacy-referrer "+subject.Digest.String())
	if f.fail != nil {
		return Referrer{}, f.fail
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.dev.cosign.artifact.sig.v1+json")
	img, err := mutate.AppendLayers(img, static.NewLayer([]byte("signature of "+subject.Digest.String()), "application/vnd.dev.cosign.simplesigning.v1+json"))
	if err != nil {
		return Referrer{}, err
	}
	img = mutate.Subject(img, subject).(v1.Image)
	d, _ := img.Digest()
	size, _ := img.Size()
	return Referrer{Subject: subject.Digest, Manifest: img, Entry: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size, ArtifactType: "application/vnd.dev.cosign.artifact.sig.v1+json"}}, nil
}

func signOpts(s Signer, f SignFormat) RegistryOptions {
	return RegistryOptions{Signing: Signing{Signer: s, Format: f}}
}

func referrerDigests(t *testing.T, ref name.Digest) []v1.Hash {
	t.Helper()
	idx, err := remote.Referrers(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var out []v1.Hash
	for _, m := range im.Manifests {
		out = append(out, m.Digest)
	}
	return out
}

func TestSignBundleFallbackTagsBeforeTheRelease(t *testing.T) {
	_, host := startRegistry(t)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	indexDigest := mustDigest(t, idx)
	before, err := idx.RawManifest()
	require.NoError(t, err)
	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(&fakeSigner{}, SignBundle))
	require.NoError(t, err)
	subjects := append([]v1.Hash{indexDigest}, digests...)
	require.Len(t, res.Signatures, 3)
	var wantWritten []string
	for i, s := range res.Signatures {
		assert.Equal(t, subjects[i], s.Subject)
		assert.Equal(t, SignBundle, s.Format)
		assert.Equal(t, []v1.Hash{s.Digest}, referrerDigests(t, repo.Digest(s.Subject.String())), "the fallback tag lists the signature")
		wantWritten = append(wantWritten, repo.Tag(FallbackTag(s.Subject)).String())
	}
	slices.Sort(wantWritten)
	got := slices.Clone(res.Written[:3])
	slices.Sort(got)
	assert.Equal(t, wantWritten, got)
	assert.Equal(t, repo.Tag("v1").String(), res.Written[3], "the release's tag last")
	after, err := idx.RawManifest()
	require.NoError(t, err)
	assert.Equal(t, before, after, "signing leaves the index as it was")
	desc, err := remote.Head(repo.Tag("v1"))
	require.NoError(t, err)
	assert.Equal(t, indexDigest, desc.Digest, "the tag names the unsigned index's digest")
}

func TestSignBundleReferrersAPIWritesNoExtraTag(t *testing.T) {
	host := testkit.ReferrersRegistry(t)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(&fakeSigner{}, SignAuto))
	require.NoError(t, err)
	assert.Equal(t, []string{repo.Tag("v1").String()}, res.Written)
	assert.Equal(t, []string{"v1"}, tags(t, repo))
	require.Len(t, res.Signatures, 3)
	assert.Equal(t, []v1.Hash{res.Signatures[1].Digest}, referrerDigests(t, repo.Digest(digests[0].String())))
}

func TestSignBundleRefusedWhereTheFallbackTagIsTheSubject(t *testing.T) {
	host := testkit.Registry(t, testkit.ResolvesDigestTags)
	idx, _ := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	f := &fakeSigner{}
	_, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(f, SignBundle))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "registry "+host+" resolves the tag "+FallbackTag(mustDigest(t, idx)))
	assert.Contains(t, err.Error(), "--sign-format legacy")
	assert.Empty(t, f.calls, "refused before anything is signed")
	assert.Empty(t, tags(t, repo), "no tag moved")
}

func TestSignAutoTakesLegacyWhereTheFallbackTagIsTheSubject(t *testing.T) {
	host := testkit.Registry(t, testkit.ResolvesDigestTags)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(&fakeSigner{}, SignAuto))
	require.NoError(t, err)
	subjects := append([]v1.Hash{mustDigest(t, idx)}, digests...)
	var want []string
	for _, s := range subjects {
		want = append(want, repo.Tag(s.Algorithm+"-"+s.Hex+".sig").String())
	}
	assert.Equal(t, append(want, repo.Tag("v1").String()), res.Written, ".sig tags before the release's")
	for i, s := range res.Signatures {
		assert.Equal(t, SignLegacy, s.Format)
		desc, err := remote.Head(repo.Tag(s.Tag))
		require.NoError(t, err)
		assert.Equal(t, s.Digest, desc.Digest)
		assert.Equal(t, subjects[i], s.Subject)
	}

	// Signing again keeps the first signatures and adds the new ones.
	res2, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(&fakeSigner{}, SignLegacy))
	require.NoError(t, err)
	img, err := remote.Image(repo.Tag(res2.Signatures[0].Tag))
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	assert.Len(t, layers, 2, "the .sig image holds both runs' signatures")
}

func TestSignFailureMovesNoTag(t *testing.T) {
	for _, format := range []SignFormat{SignBundle, SignLegacy, SignLegacyReferrer} {
		t.Run(string(format), func(t *testing.T) {
			_, host := startRegistry(t)
			idx, _ := testIndex(t)
			repo := mustRepo(t, host+"/g/helper")
			_, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}},
				signOpts(&fakeSigner{fail: errors.New("fulcio.example.test: connection refused")}, format))
			require.ErrorContains(t, err, "connection refused")
			assert.False(t, strings.Contains(err.Error(), "written:"), "failed before the tag phase")
			assert.Empty(t, tags(t, repo), "no tag moved")
		})
	}
}
