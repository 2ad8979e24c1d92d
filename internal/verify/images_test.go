package verify

import (
	"archive/tar"
	"bytes"
	"io"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

// script is an executable text file.
func script(name, body string) tartest.Entry {
	return tartest.File(name, 0o755, []byte(body))
}

// gzipLayer is the usual gzip-compressed layer.
func gzipLayer(t testing.TB, entries ...tartest.Entry) v1.Layer {
	t.Helper()
	b := tartest.Bytes(t, entries...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithCompressionLevel(1), tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}

// lay is one layer of a test image; own marks it as written by the image's
// Dockerfile (BuildKit's history comment).
type lay struct {
	own     bool
	gzip    bool
	entries []tartest.Entry
	raw     []byte // an uncompressed tar used instead of entries
}

func base(entries ...tartest.Entry) lay { return lay{entries: entries} }
func own(entries ...tartest.Entry) lay  { return lay{own: true, entries: entries} }

// testImage builds an OCI image for p (its config says p) from layers.
func testImage(t testing.TB, p v1.Platform, cfg v1.Config, layers ...lay) v1.Image {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		h := v1.History{CreatedBy: "ADD rootfs.tar /"}
		if l.own {
			h = v1.History{CreatedBy: "COPY . / # buildkit", Comment: ownComment}
		}
		layer := tartest.Layer(t, l.entries...)
		if l.raw != nil {
			layer = static.NewLayer(l.raw, types.OCIUncompressedLayer)
		}
		if l.gzip {
			layer = gzipLayer(t, l.entries...)
		}
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: h})
		require.NoError(t, err)
	}
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = cfg
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

// listed is an index entry: img listed under platform p.
type listed struct {
	p   v1.Platform
	img v1.Image
}

func testIndex(t testing.TB, entries ...listed) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, e := range entries {
		p := e.p
		adds = append(adds, mutate.IndexAddendum{Add: e.img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return roundTrip(t, idx)
}

// roundTrip writes idx to an OCI layout and reads it back, so the checks see
// serialised manifests and blobs as they would from a registry or oci:DIR.
func roundTrip(t testing.TB, idx v1.ImageIndex) v1.ImageIndex {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	_, err := layout.Write(dir, idx)
	require.NoError(t, err)
	back, err := layout.ImageIndexFromPath(dir)
	require.NoError(t, err)
	return back
}

func plat(os, arch, variant string) v1.Platform {
	return v1.Platform{OS: os, Architecture: arch, Variant: variant}
}

var (
	amd64 = plat("linux", "amd64", "")
	arm64 = plat("linux", "arm64", "")
	armv7 = plat("linux", "arm", "v7")
)

// busyboxBase is a base layer in the style of an Alpine image: one static
// binary (hello standing in for busybox) with applet symlinks, dumb-init,
// git and git-lfs as hardlinks to it, a CA bundle, /tmp, and a passwd with
// the runner's uid 100.
func busyboxBase(bin []byte, skip ...string) lay {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	entries := []tartest.Entry{
		tartest.Dir("bin/", 0o755), tartest.Dir("usr/bin/", 0o755), tartest.Dir("etc/ssl/certs/", 0o755),
		tartest.File("bin/busybox", 0o755, bin),
		tartest.Symlink("bin/sh", "busybox"),        // relative
		tartest.Symlink("bin/bash", "/bin/busybox"), // absolute
		tartest.Symlink("usr/bin/env", "../../bin/busybox"),
		tartest.Symlink("usr/bin/pgrep", "/bin/busybox"),
		tartest.Hardlink("usr/bin/dumb-init", "bin/busybox"),
		tartest.Hardlink("usr/bin/git", "bin/busybox"),
		tartest.Hardlink("usr/bin/git-lfs", "bin/busybox"),
		tartest.File("etc/ssl/certs/ca-certificates.crt", 0o644, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")),
		tartest.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\ngitlab-runner:x:100:65533:Linux User,,,:/home/gitlab-runner:/bin/sh\n")),
		tartest.Dir("tmp/", 0o1777),
		{Name: "home/gitlab-runner/", Type: tar.TypeDir, Mode: 0o755, UID: 100, GID: 65533},
	}
	for _, applet := range []string{"tee", "mkdir", "rm", "chmod", "find", "touch", "mv", "printf", "cut", "sort",
		"sed", "awk", "hostname", "cat", "timeout", "grep", "seq", "sleep", "cp"} {
		entries = append(entries, tartest.Symlink("bin/"+applet, "busybox"))
	}
	var out []tartest.Entry
	for _, e := range entries {
		if !skipped[e.Name] {
			out = append(out, e)
		}
	}
	return base(out...)
}

func helperConfigOK() v1.Config {
	return v1.Config{
		Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"},
		Cmd:        []string{"sh"},
		Env:        []string{"PATH=" + defaultPath},
	}
}

// helperOwn is the helper's own layer: the binary, gitlab-runner-build and
// the entrypoint.
func helperOwn(bin []byte) lay {
	return own(
		tartest.File("usr/bin/gitlab-runner-helper", 0o755, bin),
		script("usr/bin/gitlab-runner-build", "#!/bin/bash\n\numask 0000\nexec /bin/bash\n"),
		script("entrypoint", "#!/bin/bash\nset -e\n# run the command\nexec \"$@\"\n"),
	)
}

func runnerOwn(bin []byte) lay {
	return own(
		tartest.File("usr/bin/gitlab-runner", 0o755, bin),
		script("usr/share/gitlab-runner/clear-docker-cache", "#!/bin/sh\necho clearing\n"),
		script("entrypoint", "#!/bin/bash\nset -e\nupdate-ca-certificates >/dev/null 2>&1 || true\nexec gitlab-runner \"$@\"\n"),
	)
}
