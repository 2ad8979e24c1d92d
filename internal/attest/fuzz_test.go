package attest

import (
	"io"
	"strings"
	"testing"

	packageurl "github.com/package-url/packageurl-go"
)

// fuzzDatabase fuzzes a package database parser: whatever it is given, a
// package it returns has a name and its manager.
func fuzzDatabase(f *testing.F, parse func(io.Reader) ([]OSPackage, error), manager string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		pkgs, err := parse(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range pkgs {
			if p.Name == "" || p.Manager != manager {
				t.Fatalf("package without a name or manager: %+v", p)
			}
		}
	})
}

func FuzzParseAPKInstalled(f *testing.F) {
	fuzzDatabase(f, ParseAPKInstalled, APK, apkSnippet, "P:a\r\nV:1\r\n\r\nC:x\n", "P:\nV:1\n")
}

func FuzzParseDpkgStatus(f *testing.F) {
	fuzzDatabase(f, ParseDpkgStatus, Dpkg, dpkgSnippet, "Package: a\n\tx\n\nStatus: deinstall ok config-files\n", "package:\n")
}

func FuzzParseOSRelease(f *testing.F) {
	f.Add("ID=alpine\nVERSION_ID=\"3.20\"\n")
	f.Add("PRETTY_NAME=\"a \\\"b\\\"\"\nID='x'\n")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = ParseOSRelease(strings.NewReader(in))
	})
}

// Whatever the module path and version, the purl parses back with
// packageurl-go to the same version, and the SPDX ID made from them is
// valid.
func FuzzGolangPurl(f *testing.F) {
	f.Add("github.com/docker/cli", "v29.8.2+incompatible")
	f.Add("golang.org/x/sync", "v0.0.0-20240319094008-0393e58bdf10")
	f.Add("example.com/a b/c", "v1.0.0-pre.1+meta")
	f.Fuzz(func(t *testing.T, path, version string) {
		if path == "" || strings.ContainsAny(path, "\x00") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") || strings.HasPrefix(path, "/") {
			return
		}
		s := golangPurl(path, version, "").String()
		got, err := packageurl.FromString(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got.Version != version {
			t.Fatalf("%s: version %q, want %q", s, got.Version, version)
		}
		ids := newSPDXIDs()
		id, _ := ids.id("Package", path+"-"+version, s)
		if !spdxElementID.MatchString(strings.TrimPrefix(id, "SPDXRef-")) {
			t.Fatalf("invalid SPDX ID %q", id)
		}
	})
}
