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
)

// tf is one tar entry of a test layer.
type tf struct {
	name     string
	typ      byte
	mode     int64
	body     []byte
	link     string
	uid, gid int
}

func file(name string, mode int64, body []byte) tf {
	return tf{name: name, typ: tar.TypeReg, mode: mode, body: body}
}
func script(name, body string) tf    { return file(name, 0o755, []byte(body)) }
func dir(name string, mode int64) tf { return tf{name: name, typ: tar.TypeDir, mode: mode} }
func symlink(name, target string) tf {
	return tf{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}
func hardlink(name, target string) tf {
	return tf{name: name, typ: tar.TypeLink, mode: 0o755, link: target}
}

// tarBytes writes entries into an uncompressed tar, in memory (test only).
func tarBytes(t testing.TB, entries ...tf) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Uid: e.uid, Gid: e.gid, Format: tar.FormatPAX}
		if e.typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if e.typ == tar.TypeReg {
			_, err := tw.Write(e.body)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// tarLayer is an uncompressed OCI layer (application/vnd.oci.image.layer.v1.tar):
// valid OCI, and it keeps the race-enabled tests from spending minutes in gzip.
func tarLayer(t testing.TB, entries ...tf) v1.Layer {
	t.Helper()
	return static.NewLayer(tarBytes(t, entries...), types.OCIUncompressedLayer)
}

// gzipLayer is the usual gzip-compressed layer.
func gzipLayer(t testing.TB, entries ...tf) v1.Layer {
	t.Helper()
	b := tarBytes(t, entries...)
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
	entries []tf
}

func base(entries ...tf) lay { return lay{entries: entries} }
func own(entries ...tf) lay  { return lay{own: true, entries: entries} }

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
		layer := tarLayer(t, l.entries...)
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
	entries := []tf{
		dir("bin/", 0o755), dir("usr/bin/", 0o755), dir("etc/ssl/certs/", 0o755),
		file("bin/busybox", 0o755, bin),
		symlink("bin/sh", "busybox"),        // relative
		symlink("bin/bash", "/bin/busybox"), // absolute
		symlink("usr/bin/env", "../../bin/busybox"),
		symlink("usr/bin/pgrep", "/bin/busybox"),
		hardlink("usr/bin/dumb-init", "bin/busybox"),
		hardlink("usr/bin/git", "bin/busybox"),
		hardlink("usr/bin/git-lfs", "bin/busybox"),
		file("etc/ssl/certs/ca-certificates.crt", 0o644, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")),
		file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\ngitlab-runner:x:100:65533:Linux User,,,:/home/gitlab-runner:/bin/sh\n")),
		dir("tmp/", 0o1777),
		{name: "home/gitlab-runner/", typ: tar.TypeDir, mode: 0o755, uid: 100, gid: 65533},
	}
	for _, applet := range []string{"tee", "mkdir", "rm", "chmod", "find", "touch", "mv", "printf", "cut", "sort",
		"sed", "awk", "hostname", "cat", "timeout", "grep", "seq", "sleep", "cp"} {
		entries = append(entries, symlink("bin/"+applet, "busybox"))
	}
	var out []tf
	for _, e := range entries {
		if !skipped[e.name] {
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
		file("usr/bin/gitlab-runner-helper", 0o755, bin),
		script("usr/bin/gitlab-runner-build", "#!/bin/bash\n\numask 0000\nexec /bin/bash\n"),
		script("entrypoint", "#!/bin/bash\nset -e\n# run the command\nexec \"$@\"\n"),
	)
}

func runnerOwn(bin []byte) lay {
	return own(
		file("usr/bin/gitlab-runner", 0o755, bin),
		script("usr/share/gitlab-runner/clear-docker-cache", "#!/bin/sh\necho clearing\n"),
		script("entrypoint", "#!/bin/bash\nset -e\nupdate-ca-certificates >/dev/null 2>&1 || true\nexec gitlab-runner \"$@\"\n"),
	)
}
