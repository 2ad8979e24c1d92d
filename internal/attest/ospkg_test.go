package attest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// apkSnippet is an Alpine 3.20 armv7 database cut down to four packages,
// with the per-file lines (F, R, a, Z) that follow a package's fields.
const apkSnippet = `C:Q1s+5fsDBKIhhgcOEOl9tWEQ6YSJU=
P:musl
V:1.2.5-r0
A:armv7
S:383152
I:622592
T:the musl c library (libc) implementation
U:https://musl.libc.org/
L:MIT
o:musl
m:Timo Teräs <timo.teras@iki.fi>
t:1712082473
c:2e9a1d4e0d1b4ee4e1e2b5f5e6a7b8c9d0e1f2a3
p:so:libc.musl-armv7.so.1=1
F:lib
R:ld-musl-armhf.so.1
a:0:0:755
Z:Q1V8Y5n9Zzv1n3Q4n0Z7qWZp8Zx6M=
R:libc.musl-armv7.so.1
a:0:0:777
Z:Q17yJ3JFNypA4mxhJJr0ou6CzsJVI=

C:Q1A8s6K4CyvGH2mQf8y/1vrKp8ZYg=
P:busybox
V:1.36.1-r29
A:armv7
T:Size optimized toolbox of many common UNIX utilities
U:https://busybox.net/
L:GPL-2.0-only bzip2
o:busybox
m:Sören Tempel <soeren+alpine@soeren-tempel.net>
F:bin
R:busybox
a:0:0:755

C:Q1cD9fG0hI1jK2lM3nO4pQ5rS6tU=
P:libssl3
V:3.3.2-r0
A:armv7
L:Apache-2.0
o:openssl
m:Ariadne Conill <ariadne@dereferenced.org>
D:so:libc.musl-armv7.so.1 so:libcrypto.so.3

C:Q1xYz0aBcDeFgHiJkLmNoPqRsTuV=
P:ca-certificates-bundle
V:20240705-r0
A:armv7
L:MPL-2.0 AND MIT
o:ca-certificates
`

// dpkgSnippet is part of a Debian 12 status file: fields of several lines
// (Conffiles, Description with " ." paragraphs), a removed package that
// left its config files, and a source with its own version.
const dpkgSnippet = `Package: libc6
Status: install ok installed
Priority: optional
Section: libs
Installed-Size: 12987
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Architecture: amd64
Multi-Arch: same
Source: glibc
Version: 2.36-9+deb12u8
Depends: libgcc-s1
Breaks: aide (<< 0.17.3-4+b3), busybox (<< 1.30.1-6)
Conffiles:
 /etc/ld.so.conf.d/x86_64-linux-gnu.conf d4e7a7b88a71b5ffd9e2644e71a0cfab
Description: GNU C Library: Shared libraries
 Contains the standard libraries that are used by nearly all programs on
 the system.
Homepage: https://www.gnu.org/software/libc/libc.html

Package: base-files
Essential: yes
Status: install ok installed
Priority: required
Maintainer: Santiago Vila <sanvila@debian.org>
Architecture: amd64
Version: 12.4+deb12u7
Description: Debian base system miscellaneous files
 This package contains the basic filesystem hierarchy of a Debian system,
 .
 and several important miscellaneous files.

Package: libssl3
Status: deinstall ok config-files
Architecture: amd64
Source: openssl
Version: 3.0.11-1~deb12u2

Package: zlib1g
Status: install ok installed
Architecture: amd64
Source: zlib (1:1.2.13.dfsg-1)
Version: 1:1.2.13.dfsg-1
Maintainer: Mark Brown <broonie@debian.org>
`

func TestParseAPKInstalled(t *testing.T) {
	pkgs, err := ParseAPKInstalled(strings.NewReader(apkSnippet))
	require.NoError(t, err)
	assert.Equal(t, []OSPackage{
		{Manager: APK, Name: "musl", Version: "1.2.5-r0", Arch: "armv7", Source: "musl", License: "MIT", Maintainer: "Timo Teräs <timo.teras@iki.fi>"},
		{Manager: APK, Name: "busybox", Version: "1.36.1-r29", Arch: "armv7", Source: "busybox", License: "GPL-2.0-only bzip2", Maintainer: "Sören Tempel <soeren+alpine@soeren-tempel.net>"},
		{Manager: APK, Name: "libssl3", Version: "3.3.2-r0", Arch: "armv7", Source: "openssl", License: "Apache-2.0", Maintainer: "Ariadne Conill <ariadne@dereferenced.org>"},
		{Manager: APK, Name: "ca-certificates-bundle", Version: "20240705-r0", Arch: "armv7", Source: "ca-certificates", License: "MPL-2.0 AND MIT"},
	}, pkgs)
}

func TestParseDpkgStatus(t *testing.T) {
	pkgs, err := ParseDpkgStatus(strings.NewReader(dpkgSnippet))
	require.NoError(t, err)
	assert.Equal(t, []OSPackage{
		{Manager: Dpkg, Name: "libc6", Version: "2.36-9+deb12u8", Arch: "amd64", Source: "glibc", Maintainer: "GNU Libc Maintainers <debian-glibc@lists.debian.org>"},
		{Manager: Dpkg, Name: "base-files", Version: "12.4+deb12u7", Arch: "amd64", Maintainer: "Santiago Vila <sanvila@debian.org>"},
		{Manager: Dpkg, Name: "zlib1g", Version: "1:1.2.13.dfsg-1", Arch: "amd64", Source: "zlib", SourceVersion: "1:1.2.13.dfsg-1", Maintainer: "Mark Brown <broonie@debian.org>"},
	}, pkgs)
}

// Both parsers on the edges of their formats; parse names the one a row
// tests.
func TestParsePackageDatabaseEdges(t *testing.T) {
	apk, dpkg := ParseAPKInstalled, ParseDpkgStatus
	tests := []struct {
		name    string
		parse   func(io.Reader) ([]OSPackage, error)
		in      string
		want    []OSPackage
		wantErr string
	}{
		{"apk: empty database", apk, "", nil, ""},
		{"apk: CRLF and several blank lines", apk, "P:a\r\nV:1-r0\r\n\r\n\r\nP:b\r\nV:2-r0\r\n", []OSPackage{
			{Manager: APK, Name: "a", Version: "1-r0"}, {Manager: APK, Name: "b", Version: "2-r0"}}, ""},
		{"apk: no trailing newline", apk, "P:a\nV:1-r0", []OSPackage{{Manager: APK, Name: "a", Version: "1-r0"}}, ""},
		{"apk: missing version and arch", apk, "P:a\nT:no version\n", []OSPackage{{Manager: APK, Name: "a"}}, ""},
		{"apk: block without a name is skipped", apk, "C:Q1x=\nV:1-r0\n\nP:b\nV:2\n", []OSPackage{{Manager: APK, Name: "b", Version: "2"}}, ""},
		{"apk: a repeated field keeps the first", apk, "P:a\nV:1\nV:2\n", []OSPackage{{Manager: APK, Name: "a", Version: "1"}}, ""},
		{"apk: value with colons", apk, "P:a\nV:1\nm:A <a@b:c>\n", []OSPackage{{Manager: APK, Name: "a", Version: "1", Maintainer: "A <a@b:c>"}}, ""},
		{"apk: not a field", apk, "P:a\nversion 1\n", nil, "apk database line 2: want X:value"},
		{"dpkg: empty file", dpkg, "", nil, ""},
		{"dpkg: distroless stanza without Status", dpkg, "Package: tzdata\nVersion: 2024a-0+deb12u1\nArchitecture: all\n", []OSPackage{
			{Manager: Dpkg, Name: "tzdata", Version: "2024a-0+deb12u1", Arch: "all"}}, ""},
		{"dpkg: field names in any case, tab continuation, CRLF", dpkg, "package: a\r\nSTATUS: install ok installed\r\nDescription: x\r\n\tmore\r\nversion: 1\r\n", []OSPackage{
			{Manager: Dpkg, Name: "a", Version: "1"}}, ""},
		{"dpkg: missing version", dpkg, "Package: a\nStatus: install ok installed\n", []OSPackage{{Manager: Dpkg, Name: "a"}}, ""},
		{"dpkg: half-installed is not installed", dpkg, "Package: a\nStatus: install reinstreq half-installed\nVersion: 1\n", nil, ""},
		{"dpkg: stanza without Package is skipped", dpkg, "Version: 1\n\nPackage: b\nVersion: 2\n", []OSPackage{{Manager: Dpkg, Name: "b", Version: "2"}}, ""},
		{"dpkg: continuation before any field", dpkg, " stray\nPackage: a\n", nil, "line 1: continuation line without a field"},
		{"dpkg: not a field", dpkg, "Package: a\nVersion 1\n", nil, `dpkg status line 2: want "Field: value"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseOSRelease(t *testing.T) {
	got, err := ParseOSRelease(strings.NewReader(`# comment
NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.20.3
PRETTY_NAME="Alpine Linux \"v3.20\""
HOME_URL='https://alpinelinux.org/'

VERSION_CODENAME=
`))
	require.NoError(t, err)
	assert.Equal(t, OSRelease{ID: "alpine", VersionID: "3.20.3", PrettyName: `Alpine Linux "v3.20"`}, got)
	assert.Equal(t, "alpine-3.20.3", got.distro())
	assert.Equal(t, "debian-trixie", OSRelease{ID: "debian", VersionCodename: "trixie"}.distro())

	_, err = ParseOSRelease(strings.NewReader("ID alpine\n"))
	assert.ErrorContains(t, err, "os-release line 1")
}

// base builds a flattened filesystem from layers.
func base(t *testing.T, layers ...v1.Layer) (*rootfs.FS, []v1.Layer) {
	t.Helper()
	fs, err := rootfs.Flatten(context.Background(), layers)
	require.NoError(t, err)
	return fs, layers
}

func TestReadOSAlpine(t *testing.T) {
	// os-release is a relative symlink into /usr/lib, as on Alpine; a
	// second layer (an apk add) rewrites the database.
	fs, layers := base(t,
		tartest.Layer(t,
			tartest.Dir("etc/", 0o755),
			tartest.Symlink("etc/os-release", "../usr/lib/os-release"),
			tartest.Dir("usr/lib/", 0o755),
			tartest.File("usr/lib/os-release", 0o644, []byte("ID=alpine\nVERSION_ID=3.20.3\n")),
			tartest.Dir("lib/apk/db/", 0o755),
			tartest.File("lib/apk/db/installed", 0o644, []byte("P:musl\nV:1.2.5-r0\nA:armv7\n")),
		),
		tartest.Layer(t, tartest.File("lib/apk/db/installed", 0o644, []byte(apkSnippet))),
	)
	got, err := ReadOS(t.Context(), fs, layers)
	require.NoError(t, err)
	assert.Equal(t, OSRelease{ID: "alpine", VersionID: "3.20.3"}, got.Release)
	require.Len(t, got.Packages, 4, "the later layer's database wins")
	assert.Equal(t, "busybox", got.Packages[1].Name)
}

func TestReadOSDebianAndDistroless(t *testing.T) {
	fs, layers := base(t, tartest.Layer(t,
		tartest.File("usr/lib/os-release", 0o644, []byte("ID=debian\nVERSION_ID=\"12\"\n")),
		tartest.File("var/lib/dpkg/status", 0o644, []byte(dpkgSnippet)),
		tartest.File("var/lib/dpkg/status.d/tzdata", 0o644, []byte("Package: tzdata\nVersion: 2024a-0+deb12u1\nArchitecture: all\n")),
		tartest.File("var/lib/dpkg/status.d/tzdata.md5sums", 0o644, []byte("d41d8cd98f00b204e9800998ecf8427e  usr/share/zoneinfo/UTC\n")),
		tartest.Hardlink("var/lib/dpkg/status.d/tzdata-copy", "var/lib/dpkg/status.d/tzdata"),
		tartest.File("var/lib/dpkg/status.d/sub/ignored", 0o644, []byte("Package: nested\n")),
		tartest.File("var/lib/dpkg/status.d2", 0o644, []byte("Package: beside\n")),
	))
	got, err := ReadOS(t.Context(), fs, layers)
	require.NoError(t, err)
	assert.Equal(t, OSRelease{ID: "debian", VersionID: "12"}, got.Release, "/usr/lib/os-release when /etc/os-release is missing")
	var names []string
	for _, p := range got.Packages {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"libc6", "base-files", "zlib1g", "tzdata"}, names,
		"status, then status.d once per file contents; no .md5sums, no subdirectory, nothing beside")
}

func TestReadOSNothingThere(t *testing.T) {
	fs, layers := base(t, tartest.Layer(t, tartest.File("bin/busybox", 0o755, []byte("\x7fELF"))))
	got, err := ReadOS(t.Context(), fs, layers)
	require.NoError(t, err)
	assert.Equal(t, OS{}, got)

	// A database that is there but broken is an error naming it.
	fs, layers = base(t, tartest.Layer(t, tartest.File("lib/apk/db/installed", 0o644, []byte("garbage\n"))))
	_, err = ReadOS(t.Context(), fs, layers)
	assert.ErrorContains(t, err, "/lib/apk/db/installed: apk database line 1")
}

// onceLayer fails when its contents are streamed a second time.
type onceLayer struct {
	v1.Layer
	reads int
}

func (l *onceLayer) Uncompressed() (io.ReadCloser, error) {
	l.reads++
	if l.reads > 1 {
		return nil, fmt.Errorf("layer streamed %d times", l.reads)
	}
	return l.Layer.Uncompressed()
}

func TestReadOSKeptStreamsNoLayerAgain(t *testing.T) {
	for name, layers := range map[string][]v1.Layer{
		"alpine": {tartest.Layer(t,
			tartest.Symlink("etc/os-release", "../usr/lib/os-release"),
			tartest.File("usr/lib/os-release", 0o644, []byte("ID=alpine\nVERSION_ID=3.20.3\n")),
			tartest.File("lib/apk/db/installed", 0o644, []byte(apkSnippet)),
		)},
		"debian": {tartest.Layer(t,
			tartest.File("etc/os-release", 0o644, []byte("ID=debian\nVERSION_ID=\"12\"\n")),
			tartest.File("var/lib/dpkg/status", 0o644, []byte(dpkgSnippet)),
			tartest.File("var/lib/dpkg/status.d/tzdata", 0o644, []byte("Package: tzdata\nVersion: 2024a-0+deb12u1\nArchitecture: all\n")),
		)},
	} {
		t.Run(name, func(t *testing.T) {
			fs, err := rootfs.Flatten(t.Context(), layers)
			require.NoError(t, err)
			want, err := ReadOS(t.Context(), fs, layers)
			require.NoError(t, err)
			require.NotEmpty(t, want.Packages)

			once := make([]v1.Layer, len(layers))
			for i, l := range layers {
				once[i] = &onceLayer{Layer: l}
			}
			fs, kept, err := rootfs.FlattenKeeping(t.Context(), once, OSFile)
			require.NoError(t, err)
			got, err := ReadOSKept(t.Context(), fs, kept, once)
			require.NoError(t, err, "the flattening pass kept every file: no layer is streamed again")
			assert.Equal(t, want, got)

			// Without the kept contents the layers holding them are read again.
			_, err = ReadOSKept(t.Context(), fs, nil, once)
			assert.ErrorContains(t, err, "streamed 2 times")
		})
	}
}

func TestOSFile(t *testing.T) {
	for p, want := range map[string]bool{
		"/etc/os-release": true, "/usr/lib/os-release": true, "/lib/apk/db/installed": true,
		"/var/lib/dpkg/status": true, "/var/lib/dpkg/status.d/tzdata": true,
		"/var/lib/dpkg/status.d/tzdata.md5sums": false, "/usr/bin/gitlab-runner-helper": false, "/etc/passwd": false,
	} {
		assert.Equal(t, want, OSFile(p), p)
	}
}
