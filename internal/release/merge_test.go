package release

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/merge"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/publish"
)

const fivePlatforms = "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x"

// fanOut is testkit's fan-out with the release facts its parts carry.
type fanOut struct {
	*testkit.FanOut
	meta manifest.Meta
}

// newFanOut is testkit.NewFanOut with this package's release facts and,
// with attestations, attest's attestation manifest per image.
func newFanOut(t *testing.T, ps string, attestations bool, names ...string) *fanOut {
	t.Helper()
	meta := manifest.Meta{Created: epoch, Revision: "abc", Version: "v1.2.3", Source: "https://example.com/r"}
	jobs := testkit.FanOutJobs{Created: meta.Created, Version: meta.Version, Revision: meta.Revision,
		Annotations: func() map[string]string { return meta.Annotations("", v1.Hash{}) }}
	if attestations {
		jobs.Attest = pushAttestation
	}
	return &fanOut{FanOut: testkit.NewFanOut(t, ps, jobs, names...), meta: meta}
}

// pushAttestation writes attest's attestation manifest about subject, an
// image of name n (an SPDX statement naming it), to repo and returns its
// index entry.
func pushAttestation(t *testing.T, repo name.Repository, n string, subject v1.Descriptor) v1.Descriptor {
	t.Helper()
	st := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"` + n + `","digest":{"sha256":"` + subject.Digest.Hex + `"}}],"predicateType":"` + attestspec.PredicateSPDX + `","predicate":{}}`
	att, err := attest.AttestationManifest(subject, attest.Statement{PredicateType: attestspec.PredicateSPDX, JSON: []byte(st)})
	require.NoError(t, err)
	ad := att.IndexEntry()
	require.NoError(t, remote.Write(repo.Digest(ad.Digest.String()), att))
	return ad
}

func (f *fanOut) options() merge.Options {
	return merge.Options{Images: imageref.Options{Insecure: []string{f.Host}}, ConfigAgrees: configAgrees}
}

// runMerge plans the merge of parts, checks them in the registry and
// assembles the indexes, as PreparedMerge.Execute does before publishing.
func runMerge(t *testing.T, parts []*part.File, opts merge.Options) (*merge.Plan, *product.Result) {
	t.Helper()
	m, err := merge.New(parts, opts)
	require.NoError(t, err)
	checked, err := m.Run(t.Context())
	require.NoError(t, err)
	res, err := mergedResult(checked)
	require.NoError(t, err)
	return m, res
}

// onePush is the index a single push of image n writes: manifest.Index
// over every platform's image, with the release's annotations.
func (f *fanOut) onePush(t *testing.T, n string) v1.Hash {
	var entries []manifest.Entry
	for k, p := range f.Platforms {
		entries = append(entries, manifest.Entry{Platform: p, Image: f.Images[n][k]})
	}
	idx, err := manifest.Index(entries, f.meta.Annotations("", v1.Hash{}))
	require.NoError(t, err)
	d, err := idx.Digest()
	require.NoError(t, err)
	return d
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestMergeIsOnePush: five parts, given in any order, make the index a
// single push of the five platforms makes, byte for byte.
func TestMergeIsOnePush(t *testing.T) {
	f := newFanOut(t, fivePlatforms, false, "helper", "runner")
	_, res := runMerge(t, reversed(f.Parts), f.options())
	require.Len(t, res.Images, 2)
	for i, n := range f.Names {
		img := res.Images[i]
		assert.Equal(t, n, img.Name)
		assert.Equal(t, f.onePush(t, n), img.Digest, n)
		assert.Equal(t, []string{"v1.2.3", "latest"}, img.Tags)
		require.Len(t, img.Platforms, 5)
		for k, p := range img.Platforms {
			assert.Equal(t, platform.Format(f.Platforms[k]), platform.Format(p.Platform))
			assert.Equal(t, []string{platform.GitLabArch(f.Platforms[k]) + "-v1.2.3"}, p.Tags)
			mf, err := f.Images[n][k].Manifest()
			require.NoError(t, err)
			assert.Equal(t, manifest.CompressedSize(mf), p.CompressedSize)
		}
	}
}

// TestMergeOrdersOtherEntries: entries that are not a platform's image
// (attestation manifests, unknown/unknown) follow the platforms' images,
// in the same platform order, so a part carries them without a format
// change.
func TestMergeOrdersOtherEntries(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64,linux/s390x", true, "helper")
	_, res := runMerge(t, reversed(f.Parts), f.options())
	im, err := res.Images[0].Index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 6)
	for k := range 3 {
		want := f.Parts[k].Images[0].Manifests
		assert.Equal(t, want[0].Digest, im.Manifests[k].Digest, "platform image %d", k)
		assert.Equal(t, want[1].Digest, im.Manifests[3+k].Digest, "its attestation after the platforms, in platform order")
		require.NotNil(t, res.Images[0].Platforms[k].Attestation, "the result names the platform's attestation manifest")
		assert.Equal(t, want[1].Digest, res.Images[0].Platforms[k].Attestation.Digests.Manifest)
	}
	assert.Len(t, res.Images[0].Platforms, 3, "attestations are not platforms")
}

// TestMergeReadsNoLayer: merge reads part files, manifests and configs,
// never a layer, even when it publishes under another repository than the
// jobs pushed to.
func TestMergeReadsNoLayer(t *testing.T) {
	f := newFanOut(t, fivePlatforms, true, "helper", "runner")
	layers := f.LayerDigests(t)
	opts := f.options()
	opts.Repo = f.Host + "/final"
	m, res := runMerge(t, f.Parts, opts)
	dest, err := publish.NewRegistry(placedOf(m), m.Names(), opts.Images, nil)
	require.NoError(t, err)
	require.NoError(t, dest.Publish(context.Background(), publishImages(res)))

	// go-containerregistry's in-process registry keeps blobs registry-wide,
	// so it has them in the final repository already; docker-registry,
	// which keeps them per repository, is where the e2e suite sees mounts.
	for _, r := range f.Log.Take() {
		method, path, _ := strings.Cut(r, " ")
		if i := strings.Index(path, "/blobs/sha256:"); i >= 0 && method == "GET" {
			assert.False(t, layers[path[i+len("/blobs/"):]], "merge downloaded a layer: %s", r)
		}
		assert.NotEqual(t, "PATCH", method, "merge sent blob bytes: %s", r)
	}
	for _, n := range f.Names {
		got, err := remote.Head(f.Repo(t, "final/"+n).Tag("v1.2.3"))
		require.NoError(t, err)
		assert.Equal(t, res.Images[slicesIndex(f.Names, n)].Digest, got.Digest)
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestMergeConfigFree: config-free parts, given --platforms for the
// release's order (merge.New refuses them without), make the index a
// single push makes.
func TestMergeConfigFree(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64,linux/s390x", false, "app")
	for k, pf := range f.Parts {
		pf.Recipe, pf.Platforms = nil, []string{platform.Format(f.Platforms[k])}
	}
	opts := f.options()
	opts.Platforms = f.Platforms
	_, res := runMerge(t, reversed(f.Parts), opts)
	assert.Equal(t, f.onePush(t, "app"), res.Images[0].Digest)
}
