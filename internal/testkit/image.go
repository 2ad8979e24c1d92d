package testkit

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
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

// SharedIndex is an OCI image index listing one image per platform, each
// with two layers: first one that every image shares (the same blob under
// every manifest, as real bases share a CA bundle or an entrypoint between
// platforms), then one of its own. Each layer holds one executable file of
// random bytes (not ELF), sharedBytes and ownBytes long.
func SharedIndex(t testing.TB, sharedBytes, ownBytes int64, ps ...v1.Platform) v1.ImageIndex {
	t.Helper()
	shared := executableLayer(t, sharedBytes)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range ps {
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		img, err := mutate.AppendLayers(img, shared, executableLayer(t, ownBytes))
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
		img, err = mutate.ConfigFile(img, cf)
		require.NoError(t, err)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}

// executableLayer is a gzip layer holding one executable file of n random bytes.
func executableLayer(t testing.TB, n int64) v1.Layer {
	t.Helper()
	data := make([]byte, n)
	_, _ = rand.Read(data)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "bin/" + hex.EncodeToString(data[:min(n, 8)]), Typeflag: tar.TypeReg, Mode: 0o755, Size: n}))
	_, err := tw.Write(data)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.Bytes())), nil },
		tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}
