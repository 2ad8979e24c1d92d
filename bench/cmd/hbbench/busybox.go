package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// apkArch is Alpine's name of a platform's architecture.
func apkArch(p v1.Platform) string {
	switch p.Architecture {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "arm":
		return "armv7"
	}
	return p.Architecture
}

// busyboxApplets are the symlinks to /bin/busybox the base has.
var busyboxApplets = []string{"sh", "ls", "cat", "cp", "mv", "rm", "mkdir", "ln", "echo", "env", "grep", "sed", "tar", "gzip", "wget", "sleep", "id", "chmod", "chown", "date"}

// busyboxPackages are the packages of the base's apk database, as in a
// minimal Alpine image.
var busyboxPackages = []struct{ name, version, license string }{
	{"alpine-baselayout", "3.6.8-r1", "GPL-2.0-only"},
	{"alpine-baselayout-data", "3.6.8-r1", "GPL-2.0-only"},
	{"alpine-keys", "2.5-r0", "MIT"},
	{"alpine-release", "3.21.3-r0", "MIT"},
	{"apk-tools", "2.14.6-r3", "GPL-2.0-only"},
	{"busybox", "1.37.0-r12", "GPL-2.0-only"},
	{"busybox-binsh", "1.37.0-r12", "GPL-2.0-only"},
	{"ca-certificates-bundle", "20241121-r1", "MPL-2.0 AND MIT"},
	{"libcrypto3", "3.3.3-r0", "Apache-2.0"},
	{"libssl3", "3.3.3-r0", "Apache-2.0"},
	{"musl", "1.2.5-r9", "MIT"},
	{"musl-utils", "1.2.5-r9", "MIT AND BSD-2-Clause AND GPL-2.0-or-later"},
	{"scanelf", "1.3.8-r1", "GPL-2.0-only"},
	{"ssl_client", "1.37.0-r12", "GPL-2.0-only"},
	{"zlib", "1.3.1-r2", "Zlib"},
}

// apkInstalled is an apk database (/lib/apk/db/installed) of
// busyboxPackages for p, each with a few files, as apk writes it.
func apkInstalled(p v1.Platform) []byte {
	var b strings.Builder
	for i, pk := range busyboxPackages {
		fmt.Fprintf(&b, "C:Q1%027dbenchbenchbench=\nP:%s\nV:%s\nA:%s\nS:%d\nI:%d\nT:%s package of the benchmark base\nU:https://alpinelinux.org\nL:%s\no:%s\nm:Benchmark <bench@example.com>\nt:1700000000\nc:0000000000000000000000000000000000000000\n",
			i, pk.name, pk.version, apkArch(p), 10000+i*997, 40000+i*4099, pk.name, pk.license, strings.TrimSuffix(pk.name, "-binsh"))
		fmt.Fprintf(&b, "F:usr/share/%s\n", pk.name)
		for k := range 6 {
			fmt.Fprintf(&b, "R:file%d\na:0:0:644\nZ:Q1%027d=\n", k, i*10+k)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// busyboxLayer is a deterministic layer like busybox on Alpine: a 900 kB
// /bin/busybox (half incompressible, like a real executable), its applets
// as symlinks, /etc/os-release and an apk database naming 15 packages.
func busyboxLayer(p v1.Platform, epoch time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := func(h *tar.Header) error {
		h.ModTime, h.Format = epoch, tar.FormatPAX
		return tw.WriteHeader(h)
	}
	for _, d := range []string{"bin/", "etc/", "lib/", "lib/apk/", "lib/apk/db/", "tmp/", "usr/", "usr/bin/", "usr/lib/", "var/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := hdr(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode}); err != nil {
			return nil, err
		}
	}
	bin := make([]byte, 900<<10)
	r := rand.NewChaCha8([32]byte{'b', 'u', 's', 'y', 'b', 'o', 'x', byte(len(p.Architecture)), p.Architecture[0]})
	_, _ = r.Read(bin[:len(bin)/2])
	osRelease := []byte("NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.21.3\nPRETTY_NAME=\"Alpine Linux v3.21\"\nHOME_URL=\"https://alpinelinux.org/\"\n")
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"bin/busybox", 0o755, bin},
		{"etc/os-release", 0o644, osRelease},
		{"lib/apk/db/installed", 0o644, apkInstalled(p)},
	}
	for _, f := range files {
		if err := hdr(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	for _, a := range busyboxApplets {
		if err := hdr(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "/bin/busybox", Mode: 0o777}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
