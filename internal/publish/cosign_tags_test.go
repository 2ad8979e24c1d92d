package publish

import (
	"context"
	"io"
	"strings"
	"testing"

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

// sigImage is a cosign .sig image holding one signature layer per payload.
func sigImage(t *testing.T, payloads ...string) v1.Image {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, p := range payloads {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(p), "application/vnd.dev.cosign.simplesigning.v1+json"),
			Annotations: map[string]string{"dev.cosignproject.cosign/signature": "sig of " + p}})
		require.NoError(t, err)
	}
	return img
}

// sigPayloads lists the payloads the tag holds, in layer order.
func sigPayloads(t *testing.T, ref string) []string {
	t.Helper()
	img, err := remote.Image(testkit.Ref(t, ref))
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	var out []string
	for _, l := range layers {
		rc, err := l.Compressed()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		out = append(out, string(b))
	}
	m, err := img.Manifest()
	require.NoError(t, err)
	for i, l := range m.Layers {
		if !strings.HasPrefix(out[i], "signature of ") { // the fake signer's carry none
			assert.Equal(t, "sig of "+out[i], l.Annotations["dev.cosignproject.cosign/signature"], "a copied layer keeps its annotation")
		}
	}
	return out
}

func TestCosignTagsCopiedMergedAndSignedOnTop(t *testing.T) {
	host := testkit.Registry(t)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	tag := digests[0].Algorithm + "-" + digests[0].Hex + ".sig"
	copied := []CosignTag{{Tag: tag, Image: sigImage(t, "source-1")}}
	img := Image{Repository: repo, Index: idx, Tags: []string{"v1"}, CosignTags: copied}

	res, err := ToRegistry(context.Background(), []Image{img}, RegistryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{repo.Tag(tag).String(), repo.Tag("v1").String()}, res.Written, "the copy's tag before the release's")
	assert.Equal(t, []string{"source-1"}, sigPayloads(t, repo.Tag(tag).String()))
	want, err := copied[0].Image.Digest()
	require.NoError(t, err)
	got, err := remote.Head(repo.Tag(tag))
	require.NoError(t, err)
	assert.Equal(t, want, got.Digest, "into an empty tag the copy goes as it is")

	// The repository's own signatures are kept, the source's added once.
	require.NoError(t, remote.Write(repo.Tag(tag), sigImage(t, "target-1")))
	img.CosignTags = []CosignTag{{Tag: tag, Image: sigImage(t, "source-1", "source-2")}}
	_, err = ToRegistry(context.Background(), []Image{img}, RegistryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"target-1", "source-1", "source-2"}, sigPayloads(t, repo.Tag(tag).String()))

	// Again: every layer in place, the tag is not written.
	before, err := remote.Head(repo.Tag(tag))
	require.NoError(t, err)
	res, err = ToRegistry(context.Background(), []Image{img}, RegistryOptions{})
	require.NoError(t, err)
	assert.NotContains(t, res.Written, repo.Tag(tag).String())
	after, err := remote.Head(repo.Tag(tag))
	require.NoError(t, err)
	assert.Equal(t, before.Digest, after.Digest)

	// Signing in the legacy form adds to the copy, in one tag write.
	other := digests[1].Algorithm + "-" + digests[1].Hex + ".sig"
	img.CosignTags = []CosignTag{{Tag: other, Image: sigImage(t, "source-3")}}
	res, err = ToRegistry(context.Background(), []Image{img}, signOpts(&fakeSigner{}, SignLegacy))
	require.NoError(t, err)
	n := 0
	for _, w := range res.Written {
		if w == repo.Tag(other).String() {
			n++
		}
	}
	assert.Equal(t, 1, n, "written once: %v", res.Written)
	assert.Equal(t, []string{"source-3", "signature of " + digests[1].String()}, sigPayloads(t, repo.Tag(other).String()))
}
