package registry

import (
	"context"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

func mustParse(t *testing.T, s string) imageref.Ref {
	t.Helper()
	ref, err := imageref.Parse(s, nil)
	require.NoError(t, err)
	return ref
}

// Read pins a registry reference by digest, reads an index as an index
// and an image as an image, says "not found" for a missing tag, and hands
// every other transport to imageref.Read.
func TestRead(t *testing.T) {
	host := testkit.Registry(t)
	ctx := context.Background()
	idx := testkit.Index(t, 64, 1, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	ref := mustParse(t, host+"/base/busybox:1")
	require.NoError(t, remote.WriteIndex(ref.Name, idx))
	a, err := Read(ctx, ref, imageref.Options{})
	require.NoError(t, err)
	want, err := idx.Digest()
	require.NoError(t, err)
	assert.Equal(t, want, a.Digest)
	assert.NotNil(t, a.Index)
	assert.Nil(t, a.Image)
	assert.Equal(t, host+"/base/busybox@"+want.String(), a.Pinned())

	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "s390x"}, 64, 1)
	single := mustParse(t, host+"/base/single:1")
	require.NoError(t, remote.Write(single.Name, img))
	a, err = Read(ctx, single, imageref.Options{Blobs: imageref.NewBlobs(t.TempDir())})
	require.NoError(t, err)
	require.NotNil(t, a.Image)
	layers, err := a.Image.Layers()
	require.NoError(t, err)
	_, err = layers[0].Compressed() // through the blob store
	require.NoError(t, err)

	_, err = Read(ctx, mustParse(t, host+"/base/missing:1"), imageref.Options{})
	assert.ErrorContains(t, err, "not found in the registry")

	_, err = Read(ctx, mustParse(t, "oci:/nonexistent"), imageref.Options{})
	assert.ErrorContains(t, err, "no such layout", "a layout is imageref's")
	a, err = Read(ctx, mustParse(t, "scratch"), imageref.Options{})
	require.NoError(t, err)
	assert.Nil(t, a.Index)
}
