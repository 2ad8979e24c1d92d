package manifest

import (
	"encoding/json"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

var epoch = time.Date(2025, 3, 20, 10, 11, 12, 0, time.UTC)

// dockerBase is a Docker-typed base image with two layers and a config.
func dockerBase(t *testing.T, arch string) v1.Image {
	t.Helper()
	return testkit.Image(t, v1.Platform{OS: "linux", Architecture: arch}, 64, 2, func(cf *v1.ConfigFile) {
		cf.Config.Env = []string{"PATH=/usr/bin:/bin"}
		cf.Config.Cmd = []string{"sh"}
		cf.History = []v1.History{{CreatedBy: "base layer 1"}, {CreatedBy: "ENV PATH", EmptyLayer: true}, {CreatedBy: "base layer 2"}}
	})
}

func newLayer(t *testing.T) v1.Layer {
	t.Helper()
	l, err := random.Layer(128, types.OCILayer)
	require.NoError(t, err)
	return l
}

func TestImageOnDockerBase(t *testing.T) {
	base := dockerBase(t, "arm64")
	top := newLayer(t)
	meta := Meta{Created: epoch, Source: "https://gitlab.example.com/g/p", Revision: "abc", Version: "v1.2.3"}
	baseDigest, err := base.Digest()
	require.NoError(t, err)
	spec := Spec{
		Base:     base,
		Platform: v1.Platform{OS: "linux", Architecture: "arm64"},
		Config:   v1.Config{Env: []string{"PATH=/usr/bin:/bin"}, Cmd: []string{"sh"}, Entrypoint: []string{"/usr/bin/x"}},
		Steps: []Step{
			{Layer: top, History: v1.History{CreatedBy: "COPY x /usr/bin/x # buildkit", Comment: "buildkit.dockerfile.v0"}},
			{History: v1.History{CreatedBy: `ENTRYPOINT ["/usr/bin/x"]`, Comment: "buildkit.dockerfile.v0"}},
		},
		Annotations: meta.Annotations("registry.example.com/base:1", baseDigest),
		Created:     v1.Time{Time: epoch},
	}
	img, err := Image(spec)
	require.NoError(t, err)
	require.NoError(t, validate.Image(img))

	m, err := img.Manifest()
	require.NoError(t, err)
	assert.Equal(t, types.OCIManifestSchema1, m.MediaType)
	assert.Equal(t, types.OCIConfigJSON, m.Config.MediaType)
	require.Len(t, m.Layers, 3)
	for _, l := range m.Layers {
		assert.Equal(t, types.OCILayer, l.MediaType, "base layers are rewritten to OCI descriptors")
	}
	assert.Equal(t, baseDigest.String(), m.Annotations[specsv1.AnnotationBaseImageDigest])
	assert.Equal(t, "2025-03-20T10:11:12Z", m.Annotations[specsv1.AnnotationCreated])
	assert.Equal(t, "v1.2.3", m.Annotations[specsv1.AnnotationVersion])

	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, epoch, cf.Created.Time)
	assert.Equal(t, "arm64", cf.Architecture)
	assert.Equal(t, []string{"/usr/bin/x"}, cf.Config.Entrypoint)
	require.Len(t, cf.History, 5)
	assert.Equal(t, "base layer 2", cf.History[2].CreatedBy)
	assert.False(t, cf.History[3].EmptyLayer)
	assert.True(t, cf.History[4].EmptyLayer)
	assert.Equal(t, epoch, cf.History[4].Created.Time)
	assert.Len(t, cf.RootFS.DiffIDs, 3)

	// Same inputs, same digest.
	again, err := Image(spec)
	require.NoError(t, err)
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	assert.Equal(t, d1, d2)
}

func TestImageOnScratch(t *testing.T) {
	img, err := Image(Spec{
		Platform: v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"},
		Config:   v1.Config{Entrypoint: []string{"/usr/bin/x"}},
		Steps:    []Step{{Layer: newLayer(t), History: v1.History{CreatedBy: "COPY"}}},
		Created:  v1.Time{Time: epoch},
	})
	require.NoError(t, err)
	require.NoError(t, validate.Image(img))
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "v7", cf.Variant)
	assert.Len(t, cf.RootFS.DiffIDs, 1)
}

func TestIndex(t *testing.T) {
	var entries []Entry
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm", Variant: "v7"}} {
		img, err := Image(Spec{Platform: p, Steps: []Step{{Layer: newLayer(t)}}, Created: v1.Time{Time: epoch}})
		require.NoError(t, err)
		entries = append(entries, Entry{Platform: p, Image: img})
	}
	idx, err := Index(entries, Meta{Created: epoch}.Annotations("", v1.Hash{}))
	require.NoError(t, err)
	require.NoError(t, validate.Index(idx))
	raw, err := idx.RawManifest()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, string(types.OCIImageIndex), doc["mediaType"])
	manifests := doc["manifests"].([]any)
	require.Len(t, manifests, 2)
	for _, m := range manifests {
		entry := m.(map[string]any)
		assert.NotContains(t, entry, "artifactType")
		assert.Equal(t, string(types.OCIManifestSchema1), entry["mediaType"])
		assert.Contains(t, entry, "platform")
	}
	assert.Equal(t, "v7", manifests[1].(map[string]any)["platform"].(map[string]any)["variant"])
	ann := doc["annotations"].(map[string]any)
	assert.Equal(t, "2025-03-20T10:11:12Z", ann[specsv1.AnnotationCreated])
	assert.NotContains(t, ann, specsv1.AnnotationBaseImageDigest, "scratch has no base digest")
}

func TestBaseWithoutHistory(t *testing.T) {
	base := dockerBase(t, "amd64")
	cf, err := base.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.History = nil
	base, err = mutate.ConfigFile(base, cf)
	require.NoError(t, err)
	img, err := Image(Spec{Base: base, Platform: v1.Platform{OS: "linux", Architecture: "amd64"},
		Steps: []Step{{Layer: newLayer(t), History: v1.History{CreatedBy: "COPY"}}}, Created: v1.Time{Time: epoch}})
	require.NoError(t, err)
	got, err := img.ConfigFile()
	require.NoError(t, err)
	require.Len(t, got.History, 3, "one entry per layer: two for the base, one for ours")
	assert.Equal(t, "base layer without history", got.History[0].Comment)
	assert.Equal(t, "COPY", got.History[2].CreatedBy)
}
