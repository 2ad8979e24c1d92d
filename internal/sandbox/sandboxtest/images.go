package sandboxtest

import (
	"archive/tar"
	"bytes"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// AttackImage is an image for p whose one layer holds the adversary (the
// binary at path adversary) as /usr/bin/NAME for each name, with env as its
// config's environment.
func AttackImage(t testing.TB, p v1.Platform, adversary string, env []string, names ...string) v1.Image {
	t.Helper()
	bin, err := os.ReadFile(adversary)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range names {
		files["usr/bin/"+n] = bin
	}
	return image(t, p, env, layer(t, []string{"etc/", "usr/", "usr/bin/"}, files))
}

// image is an OCI image for p of layers, every one of them its own (a
// BuildKit history entry each).
func image(t testing.TB, p v1.Platform, env []string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, l := range layers {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{CreatedBy: "COPY . /", Comment: "buildkit.dockerfile.v0"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Env = env
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Index lists each image under its config's platform.
func Index(t testing.TB, imgs ...v1.Image) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		p := cf.Platform()
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
}

// BigImage is an image for p whose layer holds files files of size bytes
// each (zeros), for the unpack limits.
func BigImage(t testing.TB, p v1.Platform, files int, size int64) v1.Image {
	t.Helper()
	body := make([]byte, size)
	contents := map[string][]byte{}
	for i := range files {
		contents["data/f"+strconv.Itoa(i)] = body
	}
	return image(t, p, nil, layer(t, []string{"data/"}, contents))
}

// layer is an uncompressed layer of the directories (0755), then the files
// (0755), in name order.
func layer(t testing.TB, dirs []string, files map[string][]byte) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(body)), Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer)
}
