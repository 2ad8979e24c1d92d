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

// fanOut is a release of images over platforms whose jobs pushed by
// digest to an in-process registry: the images, and each job's part.
type fanOut struct {
	host      string
	log       *testkit.RequestLog
	platforms []v1.Platform
	names     []string
	images    map[string][]v1.Image // image name -> per platform
	parts     []*part.File          // one per platform, in platform order
	meta      manifest.Meta
}

// newFanOut pushes, for each platform, one image of each name (and, with
// attestations, its attestation manifest) to REGISTRY/jobs/NAME, and
// writes the part that platform's job would.
func newFanOut(t *testing.T, ps string, attestations bool, names ...string) *fanOut {
	t.Helper()
	f := &fanOut{log: &testkit.RequestLog{}, platforms: platforms(t, ps), names: names, images: map[string][]v1.Image{},
		meta: manifest.Meta{Created: epoch, Revision: "abc", Version: "v1.2.3", Source: "https://example.com/r"}}
	f.host = testkit.Registry(t, f.log.Wrap)
	for k, p := range f.platforms {
		pf := &part.File{SchemaVersion: part.SchemaVersion, MediaType: part.MediaType, Path: "parts/" + platform.GitLabArch(p) + ".json",
			Job:     &part.Job{ID: string(rune('1' + k)), Name: "build: [" + platform.Format(p) + "]"},
			Version: f.meta.Version, Revision: f.meta.Revision, Created: f.meta.Created, Platforms: strings.Split(ps, ","),
			Recipe: &part.Recipe{Path: "helperbuild.yaml", Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}}}
		for _, n := range names {
			img := testkit.Image(t, p, 512, 2)
			f.images[n] = append(f.images[n], img)
			repo := f.repo(t, "jobs/"+n)
			d := push(t, repo, img, &p)
			pi := part.Image{Name: n, Repository: repo.String(), Annotations: f.meta.Annotations("", v1.Hash{}),
				Tags: []string{"v1.2.3", "latest"}, Manifests: []v1.Descriptor{d},
				PlatformTags: []part.PlatformTag{{Platform: platform.Format(p), Digest: d.Digest, Tag: platform.GitLabArch(p) + "-v1.2.3"}}}
			if attestations {
				st := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"` + n + `","digest":{"sha256":"` + d.Digest.Hex + `"}}],"predicateType":"` + attestspec.PredicateSPDX + `","predicate":{}}`
				att, err := attest.AttestationManifest(d, attest.Statement{PredicateType: attestspec.PredicateSPDX, JSON: []byte(st)})
				require.NoError(t, err)
				ad := att.IndexEntry()
				require.NoError(t, remote.Write(repo.Digest(ad.Digest.String()), att))
				pi.Manifests = append(pi.Manifests, ad)
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

func (f *fanOut) options() merge.Options {
	return merge.Options{Images: imageref.Options{Insecure: []string{f.host}}, ConfigAgrees: configAgrees}
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
	for k, p := range f.platforms {
		entries = append(entries, manifest.Entry{Platform: p, Image: f.images[n][k]})
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
	_, res := runMerge(t, reversed(f.parts), f.options())
	require.Len(t, res.Images, 2)
	for i, n := range f.names {
		img := res.Images[i]
		assert.Equal(t, n, img.Name)
		assert.Equal(t, f.onePush(t, n), img.Digest, n)
		assert.Equal(t, []string{"v1.2.3", "latest"}, img.Tags)
		require.Len(t, img.Platforms, 5)
		for k, p := range img.Platforms {
			assert.Equal(t, platform.Format(f.platforms[k]), platform.Format(p.Platform))
			assert.Equal(t, []string{platform.GitLabArch(f.platforms[k]) + "-v1.2.3"}, p.Tags)
			mf, err := f.images[n][k].Manifest()
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
	_, res := runMerge(t, reversed(f.parts), f.options())
	im, err := res.Images[0].Index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 6)
	for k := range 3 {
		want := f.parts[k].Images[0].Manifests
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
	layers := map[string]bool{}
	for _, imgs := range f.images {
		for _, img := range imgs {
			ls, err := img.Layers()
			require.NoError(t, err)
			for _, l := range ls {
				d, err := l.Digest()
				require.NoError(t, err)
				layers[d.String()] = true
			}
		}
	}
	opts := f.options()
	opts.Repo = f.host + "/final"
	m, res := runMerge(t, f.parts, opts)
	dest, err := publish.NewRegistry(placedOf(m), m.Names(), opts.Images, nil)
	require.NoError(t, err)
	require.NoError(t, dest.Publish(context.Background(), publishImages(res)))

	// go-containerregistry's in-process registry keeps blobs registry-wide,
	// so it has them in the final repository already; docker-registry,
	// which keeps them per repository, is where the e2e suite sees mounts.
	for _, r := range f.log.Take() {
		method, path, _ := strings.Cut(r, " ")
		if i := strings.Index(path, "/blobs/sha256:"); i >= 0 && method == "GET" {
			assert.False(t, layers[path[i+len("/blobs/"):]], "merge downloaded a layer: %s", r)
		}
		assert.NotEqual(t, "PATCH", method, "merge sent blob bytes: %s", r)
	}
	for _, n := range f.names {
		got, err := remote.Head(f.repo(t, "final/"+n).Tag("v1.2.3"))
		require.NoError(t, err)
		assert.Equal(t, res.Images[slicesIndex(f.names, n)].Digest, got.Digest)
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
	for k, pf := range f.parts {
		pf.Recipe, pf.Platforms = nil, []string{platform.Format(f.platforms[k])}
	}
	opts := f.options()
	opts.Platforms = f.platforms
	_, res := runMerge(t, reversed(f.parts), opts)
	assert.Equal(t, f.onePush(t, "app"), res.Images[0].Digest)
}
