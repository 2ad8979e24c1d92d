package publish

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

// A layout takes the images at the end: no hook, so the release streams
// nothing; its entries are NAME:TAG for a recipe, TAG for one image.
func TestLayoutDestination(t *testing.T) {
	idx, digests := testIndex(t)
	img := Image{Name: "helper", Index: idx, Tags: []string{"v1"}, PlatformTags: []PlatformTag{{Manifest: digests[0], Tag: "x86_64-v1"}}}
	for _, single := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "oci")
		ref, err := imageref.Parse("oci:"+dir, nil)
		require.NoError(t, err)
		d := &Layout{Ref: ref, Single: single}
		h := d.Hooks(context.Background())
		assert.Nil(t, h.Preflight)
		assert.Nil(t, h.OnImage)
		assert.Nil(t, h.OnLayer)
		require.NoError(t, d.Publish(context.Background(), []Image{img}))
		_, im := readLayout(t, dir)
		var entries []string
		for _, m := range im.Manifests {
			entries = append(entries, m.Annotations[specsv1.AnnotationRefName])
		}
		want, wantRef := []string{"helper:v1", "helper:x86_64-v1"}, "oci:"+dir+":helper:v1"
		if single {
			want, wantRef = []string{"v1", "x86_64-v1"}, "oci:"+dir+":v1"
		}
		assert.Equal(t, want, entries)
		assert.Equal(t, wantRef, d.Reference(img))
		assert.Equal(t, wantRef+"@"+digests[1].String(), d.Pinned(img, digests[1]))
		assert.Equal(t, []string{wantRef}, d.IndexTags(img), "full references, as a registry's")
		assert.Equal(t, strings.TrimSuffix(wantRef, "v1")+"x86_64-v1", d.PlatformTag(img, "x86_64-v1"))
	}
	ref, err := imageref.Parse("oci:out", nil)
	require.NoError(t, err)
	d := &Layout{Ref: ref}
	assert.Equal(t, "oci:out:runner", d.Reference(Image{Name: "runner"}), "an untagged image is listed by name")
	assert.Equal(t, []string{}, d.IndexTags(Image{Name: "runner"}), "no tags is an empty list, not null")
}

// A config-free push goes to every repository its --tag references name:
// the hooks upload to each, Publish writes each repository's own tags.
func TestRegistryDestinationByTags(t *testing.T) {
	_, host := startRegistry(t)
	tags := ByTags{mustTag(t, host+"/a/app:v1"), mustTag(t, host+"/b/app:latest"), mustTag(t, host+"/a/app:v1.2")}
	ctx := context.Background()
	d, err := NewRegistry(tags, []string{"app"}, imageref.Options{Keychain: authn.NewMultiKeychain()}, nil)
	require.NoError(t, err)
	assert.Equal(t, []name.Repository{mustRepo(t, host+"/a/app"), mustRepo(t, host+"/b/app")}, d.Repositories())

	h := d.Hooks(ctx)
	require.NoError(t, h.Preflight(ctx))
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	child := testkit.Image(t, amd64, 256, 2)
	childDigest, err := child.Digest()
	require.NoError(t, err)
	require.NoError(t, h.OnImage(ctx, "app", amd64, child))
	layers, err := child.Layers()
	require.NoError(t, err)
	for _, repo := range d.Repositories() {
		for _, l := range layers {
			ld, err := l.Digest()
			require.NoError(t, err)
			resp, err := http.Head("http://" + host + "/v2/" + repo.RepositoryStr() + "/blobs/" + ld.String())
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, "OnImage uploaded %s to %s", ld, repo)
		}
		desc, err := remote.Head(repo.Digest(childDigest.String()))
		require.NoError(t, err, "OnImage puts the manifest by digest")
		assert.Equal(t, childDigest, desc.Digest)
		for _, tag := range tags {
			_, err := remote.Head(tag)
			require.Error(t, err, "OnImage moves no tag: %s", tag)
		}
	}

	idx, _ := testIndex(t)
	img := Image{Name: "app", Index: idx, Tags: []string{"v1", "latest", "v1.2"}}
	require.NoError(t, d.Publish(ctx, []Image{img}))
	want, err := idx.Digest()
	require.NoError(t, err)
	for _, tag := range tags {
		desc, err := remote.Head(tag)
		require.NoError(t, err)
		assert.Equal(t, want, desc.Digest, tag.String())
	}
	_, err = remote.Head(mustTag(t, host+"/b/app:v1"))
	assert.Error(t, err, "each repository gets only its own tags")

	assert.Equal(t, host+"/a/app", d.Reference(img))
	assert.Equal(t, host+"/a/app@"+want.String(), d.Pinned(img, want))
	assert.Equal(t, []string{host + "/a/app:v1", host + "/b/app:latest", host + "/a/app:v1.2"}, d.IndexTags(img))
}

// A recipe's image NAME goes to PREFIX/NAME, named as the user wrote the
// prefix.
func TestRegistryDestinationByPrefix(t *testing.T) {
	_, host := startRegistry(t)
	ctx := context.Background()
	d, err := NewRegistry(ByPrefix{Prefix: host + "/g/"}, []string{"helper", "runner", "helper"}, imageref.Options{Keychain: authn.NewMultiKeychain()}, nil)
	require.NoError(t, err)
	assert.Equal(t, []name.Repository{mustRepo(t, host+"/g/helper"), mustRepo(t, host+"/g/runner")}, d.Repositories())
	idx, digests := testIndex(t)
	img := Image{Name: "helper", Index: idx, Tags: []string{"v1"}, PlatformTags: []PlatformTag{{Manifest: digests[1], Tag: "arm64-v1"}}}
	require.NoError(t, d.Publish(ctx, []Image{img}))
	desc, err := remote.Head(mustTag(t, host+"/g/helper:arm64-v1"))
	require.NoError(t, err)
	assert.Equal(t, digests[1], desc.Digest)
	assert.Equal(t, host+"/g/helper", d.Reference(img))
	assert.Equal(t, []string{host + "/g/helper:v1"}, d.IndexTags(img))
	assert.Equal(t, host+"/g/helper:arm64-v1", d.PlatformTag(img, "arm64-v1"))
}

func mustTag(t *testing.T, s string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(s)
	require.NoError(t, err)
	return tag
}
