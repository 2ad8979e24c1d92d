package merge

import (
	"fmt"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// TestRunGivesOnePushsEntries: five parts, given in any order, give each
// image's platform images in the release's order, with their tags, and
// the tags of the image.
func TestRunGivesOnePushsEntries(t *testing.T) {
	f := newFanOut(t, fivePlatforms, false, "helper", "runner")
	m, err := New(reversed(f.Parts), f.options())
	require.NoError(t, err)
	assert.Equal(t, []string{"helper", "runner"}, m.Names())
	assert.Equal(t, fivePlatforms, platform.FormatList(m.Platforms()))
	res, err := m.Run(t.Context())
	require.NoError(t, err)
	require.Len(t, res.Images, 2)
	for i, n := range f.Names {
		img := res.Images[i]
		assert.Equal(t, n, img.Name)
		assert.Equal(t, []string{"v1.2.3", "latest"}, img.Tags)
		assert.Equal(t, annotations(), img.Annotations)
		require.Len(t, img.Platforms, 5)
		require.Len(t, img.Entries, 5)
		for k, p := range img.Platforms {
			want, err := f.Images[n][k].Digest()
			require.NoError(t, err)
			assert.Equal(t, platform.Format(f.Platforms[k]), platform.Format(p.Platform))
			assert.Equal(t, want, p.Descriptor.Digest)
			assert.Equal(t, want, img.Entries[k].Descriptor.Digest)
			assert.Equal(t, []string{platform.GitLabArch(f.Platforms[k]) + "-v1.2.3"}, p.Tags)
			mf, err := f.Images[n][k].Manifest()
			require.NoError(t, err)
			assert.Equal(t, mf, p.Manifest, "the manifest as read")
			assert.Nil(t, p.Attestation)
		}
	}
}

// TestRunOrdersOtherEntries: entries that are not a platform's image
// (attestation manifests, unknown/unknown) follow the platforms' images,
// in the same platform order, so a part carries them without a format
// change.
func TestRunOrdersOtherEntries(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64,linux/s390x", true, "helper")
	m, err := New(reversed(f.Parts), f.options())
	require.NoError(t, err)
	res, err := m.Run(t.Context())
	require.NoError(t, err)
	entries := res.Images[0].Entries
	require.Len(t, entries, 6)
	for k := range 3 {
		want := f.Parts[k].Images[0].Manifests
		assert.Equal(t, want[0].Digest, entries[k].Descriptor.Digest, "platform image %d", k)
		assert.Equal(t, want[1].Digest, entries[3+k].Descriptor.Digest, "its attestation after the platforms, in platform order")
		require.NotNil(t, res.Images[0].Platforms[k].Attestation, "the result names the platform's attestation manifest")
		assert.Equal(t, want[1].Digest, res.Images[0].Platforms[k].Attestation.Digest)
		assert.Equal(t, attestspec.PredicateSPDX, res.Images[0].Platforms[k].Attestation.Manifest.Layers[0].Annotations[attestspec.AnnotationPredicateType])
	}
	assert.Len(t, res.Images[0].Platforms, 3, "attestations are not platforms")
}

// TestMergeAnnotationsOfTheFirstPlatform: the index carries the base of
// the release's first platform, as a single push does, whichever part
// comes first; parts that disagree on another annotation are refused.
func TestMergeAnnotationsOfTheFirstPlatform(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64", false, "helper")
	for k, pf := range f.Parts {
		pf.Images[0].Annotations[specsv1.AnnotationBaseImageName] = "registry.example.com/base:" + platform.GitLabArch(f.Platforms[k])
	}
	m, err := New(reversed(f.Parts), f.options())
	require.NoError(t, err)
	res, err := m.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com/base:x86_64", res.Images[0].Annotations[specsv1.AnnotationBaseImageName])
	assert.Equal(t, "registry.example.com/base:x86_64", res.Images[0].BaseName)

	f.Parts[1].Images[0].Annotations[specsv1.AnnotationSource] = "https://example.com/fork"
	_, err = New(f.Parts, f.options())
	require.Error(t, err)
	assert.Equal(t, `image helper: parts disagree on the index annotation org.opencontainers.image.source: "https://example.com/r" in parts/x86_64.json (job 1 "build: [linux/amd64]"), "https://example.com/fork" in parts/arm64.json (job 2 "build: [linux/arm64]")`, err.Error())
}

// TestRunReadsNoLayer: merge reads part files, manifests and configs,
// never a layer, and writes nothing.
func TestRunReadsNoLayer(t *testing.T) {
	f := newFanOut(t, fivePlatforms, true, "helper", "runner")
	layers := f.LayerDigests(t)
	opts := f.options()
	opts.Repo = f.Host + "/final"
	m, err := New(f.Parts, opts)
	require.NoError(t, err)
	_, err = m.Run(t.Context())
	require.NoError(t, err)
	reqs := f.Log.Take()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		method, path, _ := strings.Cut(r, " ")
		if i := strings.Index(path, "/blobs/sha256:"); i >= 0 {
			assert.False(t, layers[path[i+len("/blobs/"):]], "merge downloaded a layer: %s", r)
		}
		assert.Contains(t, []string{"GET", "HEAD"}, method, "merge wrote: %s", r)
	}
}

// TestRunRefusesAConfigOfAnotherPlatform: a platform image whose config
// the config check refuses is refused, naming the image, its part and the
// check's reason, before anything is written.
func TestRunRefusesAConfigOfAnotherPlatform(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64", false, "helper")
	d := testkit.PushByDigest(t, f.Repo(t, "jobs/helper"), testkit.Image(t, f.Platforms[0], 512, 2), &f.Platforms[1])
	f.Parts[1].Images[0].Manifests[0] = d
	m, err := New(f.Parts, f.options())
	require.NoError(t, err)
	_, err = m.Run(t.Context())
	require.Error(t, err)
	assert.Equal(t, "image helper: manifest "+d.Digest.String()+` of linux/arm64 from parts/arm64.json (job 2 "build: [linux/arm64]"): config says linux/amd64 but the index lists it as linux/arm64`, err.Error())

	opts := f.options()
	opts.ConfigAgrees = nil
	_, err = New(f.Parts, opts)
	require.ErrorContains(t, err, "ConfigAgrees is nil")
}

// TestMergeConfigFree: config-free parts know only their own job's
// platforms, so merge needs --platforms for the release's order.
func TestMergeConfigFree(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64,linux/s390x", false, "app")
	for k, pf := range f.Parts {
		pf.Recipe, pf.Platforms = nil, []string{platform.Format(f.Platforms[k])}
	}
	_, err := New(f.Parts, f.options())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(config-free parts list only the platforms their job built): give merge --platforms in the release's order, e.g. --platforms linux/amd64,linux/arm64,linux/s390x")

	opts := f.options()
	opts.Platforms = f.Platforms
	m, err := New(reversed(f.Parts), opts)
	require.NoError(t, err)
	assert.Equal(t, "linux/amd64,linux/arm64,linux/s390x", platform.FormatList(m.Platforms()))

	opts.Recipe = &part.Recipe{Path: "helperbuild.yaml"}
	_, err = New(f.Parts, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--config helperbuild.yaml: the parts were built config-free")
}

// TestMergeRepositories: parts that pushed one image to different
// repositories are refused, unless --repo says where it goes.
func TestMergeRepositories(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64", false, "helper")
	f.Parts[1].Images[0].Repository = f.Host + "/staging/helper"
	_, err := New(f.Parts, f.options())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "image helper: parts disagree on its repositories and tags: "+f.Host+"/jobs/helper:v1.2.3,latest in parts/x86_64.json")

	opts := f.options()
	opts.Repo = f.Host + "/final"
	m, err := New(f.Parts, opts)
	require.NoError(t, err)
	assert.Equal(t, f.Host+"/final/helper", m.Placements()["helper"][0].Repository.String())
}

// TestMergeRefusesStrayAttestations: an attestation manifest must be about
// one of the image's platform images, and its statements' subject must be
// the image its index entry names; merge refuses a part where either is
// not so, before anything is written.
func TestMergeRefusesStrayAttestations(t *testing.T) {
	const job = `parts/x86_64.json (job 1 "build: [linux/amd64]")`
	zero := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name    string
		edit    func(t *testing.T, f *fanOut, att *v1.Descriptor)
		planErr string
		runErr  string
	}{
		{name: "about no platform image", edit: func(t *testing.T, f *fanOut, att *v1.Descriptor) {
			att.Annotations[attestspec.AnnotationReferenceDigest] = zero
		}, planErr: `image helper: attestation manifest %s from ` + job + ` is about "` + zero + `" (its vnd.docker.reference.digest), none of the image's platform images; merge the part files as their jobs wrote them`},
		{name: "without a reference", edit: func(t *testing.T, f *fanOut, att *v1.Descriptor) {
			delete(att.Annotations, attestspec.AnnotationReferenceDigest)
		}, planErr: `image helper: attestation manifest %s from ` + job + ` is about "" (its vnd.docker.reference.digest), none of the image's platform images; merge the part files as their jobs wrote them`},
		{name: "subject is another image", edit: func(t *testing.T, f *fanOut, att *v1.Descriptor) {
			att.Annotations[attestspec.AnnotationReferenceDigest] = f.Parts[1].Images[0].Manifests[0].Digest.String()
		}, runErr: `: its subject is [%[2]s], not %[3]s, which its index entry says it is about (vnd.docker.reference.digest); merge the part files as their jobs wrote them`},
		{name: "no statement", edit: func(t *testing.T, f *fanOut, att *v1.Descriptor) {
			d := testkit.PushByDigest(t, f.Repo(t, "jobs/helper"), testkit.Image(t, v1.Platform{OS: "unknown", Architecture: "unknown"}, 64, 1), att.Platform)
			d.Annotations = att.Annotations
			*att = d
		}, runErr: `image helper: attestation manifest %s from ` + job + `: holds no in-toto statement, its index entry says it is about %[3]s; merge the part files`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFanOut(t, "linux/amd64,linux/arm64", true, "helper")
			att := &f.Parts[0].Images[0].Manifests[1]
			require.True(t, attestspec.IsAttestation(*att))
			subject := f.Parts[0].Images[0].Manifests[0].Digest
			tc.edit(t, f, att)
			f.Log.Take()
			m, err := New(f.Parts, f.options())
			if tc.planErr != "" {
				require.Error(t, err)
				assert.Equal(t, fmt.Sprintf(tc.planErr, att.Digest), err.Error())
				return
			}
			require.NoError(t, err)
			_, err = m.Run(t.Context())
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf(tc.runErr, att.Digest, subject, att.Annotations[attestspec.AnnotationReferenceDigest]))
			assert.NotContains(t, err.Error(), "\n")
			for _, r := range f.Log.Take() {
				assert.NotRegexp(t, "^(PUT|POST|PATCH|DELETE) ", r, "merge wrote before refusing")
			}
		})
	}
}

// TestMergeImagesInReleaseOrder: the first part lacks the first image
// (it builds none of that job's platforms); merge still lists, reports
// and tags the images in the release's order.
func TestMergeImagesInReleaseOrder(t *testing.T) {
	partOf := func(names ...string) *part.File {
		f := &part.File{}
		for _, n := range names {
			f.Images = append(f.Images, part.Image{Name: n})
		}
		return f
	}
	images := func(names ...string) []*mergeImage {
		var out []*mergeImage
		for _, n := range names {
			out = append(out, &mergeImage{name: n})
		}
		return out
	}
	namesOf := func(ms []*mergeImage) []string {
		var out []string
		for _, mi := range ms {
			out = append(out, mi.name)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		parts []*part.File
		first []string // first appearance
		want  []string
	}{
		{"first part lacks the first image", []*part.File{partOf("runner"), partOf("helper", "runner"), partOf("helper", "runner")},
			[]string{"runner", "helper"}, []string{"helper", "runner"}},
		{"an image in two repositories", []*part.File{partOf("runner", "runner"), partOf("helper", "helper", "runner", "runner")},
			[]string{"runner", "helper"}, []string{"helper", "runner"}},
		{"three images, each part a share", []*part.File{partOf("c"), partOf("b", "c"), partOf("a", "c")},
			[]string{"c", "b", "a"}, []string{"b", "a", "c"}},
		{"parts that disagree keep first appearance", []*part.File{partOf("a", "b"), partOf("b", "a")},
			[]string{"a", "b"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, namesOf(inPartOrder(images(tc.first...), tc.parts)))
		})
	}
}

// TestMergeNoLatest: --no-latest (the CI template's release from a branch)
// writes every tag the parts name but latest, in place or under --repo;
// without it latest is written.
func TestMergeNoLatest(t *testing.T) {
	f := newFanOut(t, "linux/amd64,linux/arm64", false, "helper")
	for _, repo := range []string{"", f.Host + "/final"} {
		opts := f.options()
		opts.NoLatest, opts.Repo = true, repo
		m, err := New(f.Parts, opts)
		require.NoError(t, err)
		for _, pl := range m.Placements()["helper"] {
			assert.Equal(t, []string{"v1.2.3"}, pl.Tags, repo)
		}
	}
	m, err := New(f.Parts, f.options())
	require.NoError(t, err)
	assert.Equal(t, []string{"v1.2.3", "latest"}, m.Placements()["helper"][0].Tags)
	assert.Equal(t, []string{"v1.2.3", "latest"}, f.Parts[0].Images[0].Tags, "the parts are not changed")
}
