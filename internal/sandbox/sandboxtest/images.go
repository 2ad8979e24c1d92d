package sandboxtest

import (
	"os"
	"strconv"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/tartest"
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
	entries := []tartest.Entry{tartest.Dir("usr/", 0o755), tartest.Dir("usr/bin/", 0o755), tartest.Dir("etc/", 0o755)}
	for _, n := range names {
		entries = append(entries, tartest.File("usr/bin/"+n, 0o755, bin))
	}
	return image(t, p, env, tartest.Layer(t, entries...))
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
	entries := []tartest.Entry{tartest.Dir("data/", 0o755)}
	body := make([]byte, size)
	for i := range files {
		entries = append(entries, tartest.File("data/f"+strconv.Itoa(i), 0o644, body))
	}
	return image(t, p, nil, tartest.Layer(t, entries...))
}
