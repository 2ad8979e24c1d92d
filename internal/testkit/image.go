package testkit

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// Image is a random image (go-containerregistry's random.Image: Docker
// media types, layers of random bytes) whose config names p's os,
// architecture and variant. Each edit then changes its config file.
func Image(t testing.TB, p v1.Platform, layerBytes, layers int64, edits ...func(*v1.ConfigFile)) v1.Image {
	t.Helper()
	img, err := random.Image(layerBytes, layers)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	for _, edit := range edits {
		edit(cf)
	}
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

// Index is an OCI image index listing one Image per platform, in order,
// each under its platform.
func Index(t testing.TB, layerBytes, layers int64, ps ...v1.Platform) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range ps {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: Image(t, p, layerBytes, layers), Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}
