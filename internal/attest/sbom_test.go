package attest

import (
	"encoding/json"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

var (
	epoch   = time.Date(2025, 3, 20, 10, 11, 12, 0, time.UTC)
	linuxV7 = v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}
)

const (
	runnerModule = "gitlab.com/gitlab-org/gitlab-runner"
	// Real go.sum lines, so the checksums are what Go writes.
	vtprotoSum = "h1:GFCKgmp0tecUJ0sJuv4pzYCqS9+RGSn52M3FUwPs+uo="
	cliSum     = "h1:2zgdFuoFst2T80oS42vhKGxkd0JRo305eIEKTsxR7pQ="
	syncSum    = "h1:dJnifr0nMV8/SBnBvdo4eSGGnrc3O4FFx6IqvtLcmRs="
	unitsSum   = "h1:69rxXcBk27SvSaaxTtLh/8llcHD8vYHT7WSdRZ/jvr4="
)

// buildInfo is the build info of a gitlab-runner binary built from a
// checkout with deps.
func buildInfo(mainPkg, mainVersion string, deps ...*debug.Module) *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      runnerModule + mainPkg,
		Main:      debug.Module{Path: runnerModule, Version: mainVersion},
		Deps:      deps,
		Settings:  []debug.BuildSetting{{Key: "GOARCH", Value: "arm"}, {Key: "GOARM", Value: "7"}},
	}
}

func binary(t testing.TB, path string, bi *debug.BuildInfo) Binary {
	return Binary{Path: path, Info: bi, SHA256: hash(t, "binary "+path)}
}

// One binary per case; each case names the module purl it must find, with
// the version, checksum and comment it must carry.
func TestSBOMGoModules(t *testing.T) {
	tests := []struct {
		name        string
		dep         *debug.Module
		mainVersion string
		wantPurl    string
		wantVersion string
		wantSum     string // the h1: hash the SBOM names; "" for none
		wantComment string
		wantBinPurl string
	}{
		{
			name:        "pseudo-version",
			dep:         &debug.Module{Path: "github.com/planetscale/vtprotobuf", Version: "v0.6.1-0.20240319094008-0393e58bdf10", Sum: vtprotoSum},
			wantPurl:    "pkg:golang/github.com/planetscale/vtprotobuf@v0.6.1-0.20240319094008-0393e58bdf10",
			wantVersion: "v0.6.1-0.20240319094008-0393e58bdf10",
			wantSum:     vtprotoSum,
		},
		{
			name:        "+incompatible",
			dep:         &debug.Module{Path: "github.com/docker/cli", Version: "v29.8.2+incompatible", Sum: cliSum},
			wantPurl:    "pkg:golang/github.com/docker/cli@v29.8.2%2Bincompatible",
			wantVersion: "v29.8.2+incompatible",
			wantSum:     cliSum,
		},
		{
			name: "replaced by another module version",
			dep: &debug.Module{Path: "github.com/docker/go-units", Version: "v0.4.0",
				Replace: &debug.Module{Path: "example.com/fork/go-units", Version: "v0.5.0", Sum: unitsSum}},
			wantPurl:    "pkg:golang/example.com/fork/go-units@v0.5.0",
			wantVersion: "v0.5.0",
			wantSum:     unitsSum,
			wantComment: "replaces github.com/docker/go-units v0.4.0",
		},
		{
			name: "replaced by a directory",
			dep: &debug.Module{Path: "example.com/local", Version: "v0.0.0-00010101000000-000000000000",
				Replace: &debug.Module{Path: "../local", Version: "(devel)"}},
			wantPurl:    "pkg:golang/example.com/local",
			wantComment: "example.com/local v0.0.0-00010101000000-000000000000 replaced by the directory ../local",
		},
		{
			name:        "replaced by a directory, version left empty",
			dep:         &debug.Module{Path: "example.com/local", Version: "v1.0.0", Replace: &debug.Module{Path: "/src/local"}},
			wantPurl:    "pkg:golang/example.com/local",
			wantComment: "example.com/local v1.0.0 replaced by the directory /src/local",
		},
		{
			name:        "no checksum (vendored build)",
			dep:         &debug.Module{Path: "golang.org/x/sync", Version: "v0.25.0"},
			wantPurl:    "pkg:golang/golang.org/x/sync@v0.25.0",
			wantVersion: "v0.25.0",
		},
		{
			name:        "tagged main module",
			dep:         &debug.Module{Path: "golang.org/x/sync", Version: "v0.25.0", Sum: syncSum},
			mainVersion: "v17.10.0",
			wantPurl:    "pkg:golang/golang.org/x/sync@v0.25.0",
			wantVersion: "v0.25.0",
			wantSum:     syncSum,
			wantBinPurl: "pkg:golang/gitlab.com/gitlab-org/gitlab-runner@v17.10.0#apps/gitlab-runner-helper",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mv := tt.mainVersion
			if mv == "" {
				mv = "(devel)"
			}
			bin := binary(t, "/usr/bin/gitlab-runner-helper", buildInfo("/apps/gitlab-runner-helper", mv, tt.dep))
			out, err := SBOM(SBOMSpec{Image: testImage(t, linuxV7), Binaries: []Binary{bin}, Created: epoch})
			require.NoError(t, err)
			d := parseSPDX(t, out)

			mod := spdxPkg(t, d, tt.wantPurl)
			assert.Equal(t, tt.wantVersion, mod.PackageVersion)
			assert.Equal(t, tt.wantComment, mod.PackageComment)
			// Go's h1: hash is no file's SHA-256: an externalRef, no checksum.
			assert.Empty(t, mod.PackageChecksums)
			assert.Equal(t, tt.wantSum, moduleHash(mod))

			wantBin := cmpOr(tt.wantBinPurl, "pkg:golang/gitlab.com/gitlab-org/gitlab-runner#apps/gitlab-runner-helper")
			bp := spdxPkg(t, d, wantBin)
			assert.Equal(t, "/usr/bin/gitlab-runner-helper", bp.PackageFileName)
			assert.Equal(t, runnerModule+"/apps/gitlab-runner-helper", bp.PackageName)
			assert.Equal(t, bin.SHA256.Hex, bp.PackageChecksums[0].Value)
			std := spdxPkg(t, d, "pkg:golang/stdlib@1.26.8")
			assert.Equal(t, "go1.26.8", std.PackageVersion)

			rels := related(d)
			img := string(d.Packages[0].PackageSPDXIdentifier)
			assert.Contains(t, rels, "DOCUMENT DESCRIBES "+img)
			assert.Contains(t, rels, img+" CONTAINS "+string(bp.PackageSPDXIdentifier))
			assert.Contains(t, rels, string(bp.PackageSPDXIdentifier)+" DEPENDS_ON "+string(mod.PackageSPDXIdentifier))
			assert.Contains(t, rels, string(bp.PackageSPDXIdentifier)+" DEPENDS_ON "+string(std.PackageSPDXIdentifier))
			assert.Len(t, d.Packages, 4, "image, binary, module, stdlib")
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fullSpec is a helper image for linux/arm/v7 on an Alpine base, with two
// binaries sharing modules.
func fullSpec(t testing.TB) SBOMSpec {
	t.Helper()
	osPkgs, err := ParseAPKInstalled(strings.NewReader(apkSnippet))
	require.NoError(t, err)
	shared := []*debug.Module{
		{Path: "github.com/docker/cli", Version: "v29.8.2+incompatible", Sum: cliSum},
		{Path: "github.com/planetscale/vtprotobuf", Version: "v0.6.1-0.20240319094008-0393e58bdf10", Sum: vtprotoSum},
		{Path: "github.com/docker/go-units", Version: "v0.4.0", Replace: &debug.Module{Path: "example.com/fork/go-units", Version: "v0.5.0", Sum: unitsSum}},
	}
	helper := buildInfo("/apps/gitlab-runner-helper", "(devel)", shared...)
	runner := buildInfo("", "(devel)", append(slices.Clone(shared), &debug.Module{Path: "golang.org/x/sync", Version: "v0.25.0", Sum: syncSum})...)
	return SBOMSpec{
		Image:       testImage(t, linuxV7),
		Base:        Base{Ref: "registry.example.com/base/runner-helper:alpine", Digest: hash(t, "base arm v7")},
		Binaries:    []Binary{binary(t, "/usr/bin/gitlab-runner-helper", helper), binary(t, "/usr/bin/gitlab-runner", runner)},
		OS:          OS{Release: OSRelease{ID: "alpine", VersionID: "3.20.3", PrettyName: "Alpine Linux v3.20"}, Packages: osPkgs},
		Created:     epoch,
		ToolVersion: "v0.9.0",
	}
}

func TestSBOMGolden(t *testing.T) {
	spec := fullSpec(t)
	out, err := SBOM(spec)
	require.NoError(t, err)
	golden(t, "sbom", out)

	d := parseSPDX(t, out)
	assert.Equal(t, "2025-03-20T10:11:12Z", d.CreationInfo.Created)
	assert.Equal(t, "Tool", d.CreationInfo.Creators[0].CreatorType)
	assert.Equal(t, "helperbuild-v0.9.0", d.CreationInfo.Creators[0].Creator)

	img := spdxPkg(t, d, "pkg:oci/gitlab-runner-helper@"+spec.Image.Manifest.Digest.String()+"?arch=arm&os=linux&variant=v7")
	base := spdxPkg(t, d, "pkg:oci/runner-helper@"+spec.Base.Digest.String()+"?arch=arm&os=linux&repository_url=registry.example.com/base/runner-helper&tag=alpine&variant=v7")
	assert.Equal(t, "CONTAINER", img.PrimaryPackagePurpose)
	assert.Equal(t, spec.Base.Digest.String(), base.PackageVersion)
	var osPkg string
	for _, p := range d.Packages {
		if p.PrimaryPackagePurpose == "OPERATING_SYSTEM" {
			osPkg = string(p.PackageSPDXIdentifier)
			assert.Equal(t, "alpine", p.PackageName)
			assert.Equal(t, "3.20.3", p.PackageVersion)
		}
	}
	require.NotEmpty(t, osPkg)
	musl := spdxPkg(t, d, "pkg:apk/alpine/musl@1.2.5-r0?arch=armv7&distro=alpine-3.20.3")
	assert.Equal(t, "MIT", musl.PackageLicenseDeclared)
	assert.Equal(t, "Person", musl.PackageOriginator.OriginatorType)
	assert.Equal(t, "Timo Teräs (timo.teras@iki.fi)", musl.PackageOriginator.Originator)
	ssl := spdxPkg(t, d, "pkg:apk/alpine/libssl3@3.3.2-r0?arch=armv7&distro=alpine-3.20.3&upstream=openssl")
	assert.Equal(t, "built package from: openssl 3.3.2-r0", ssl.PackageSourceInfo)
	bb := spdxPkg(t, d, "pkg:apk/alpine/busybox@1.36.1-r29?arch=armv7&distro=alpine-3.20.3")
	assert.Equal(t, "NOASSERTION", bb.PackageLicenseDeclared, "\"GPL-2.0-only bzip2\" is not an SPDX expression")
	assert.Contains(t, bb.PackageLicenseComments, "GPL-2.0-only bzip2")

	helper := spdxPkg(t, d, "pkg:golang/gitlab.com/gitlab-org/gitlab-runner#apps/gitlab-runner-helper")
	runner := spdxPkg(t, d, "pkg:golang/gitlab.com/gitlab-org/gitlab-runner")
	cli := spdxPkg(t, d, "pkg:golang/github.com/docker/cli@v29.8.2%2Bincompatible")
	sync := spdxPkg(t, d, "pkg:golang/golang.org/x/sync@v0.25.0")
	rels := related(d)
	imgID, baseID := string(img.PackageSPDXIdentifier), string(base.PackageSPDXIdentifier)
	for _, want := range []string{
		"DOCUMENT DESCRIBES " + imgID,
		imgID + " DESCENDANT_OF " + baseID,
		imgID + " CONTAINS " + osPkg,
		osPkg + " CONTAINS " + string(musl.PackageSPDXIdentifier),
		imgID + " CONTAINS " + string(helper.PackageSPDXIdentifier),
		imgID + " CONTAINS " + string(runner.PackageSPDXIdentifier),
		string(helper.PackageSPDXIdentifier) + " DEPENDS_ON " + string(cli.PackageSPDXIdentifier),
		string(runner.PackageSPDXIdentifier) + " DEPENDS_ON " + string(cli.PackageSPDXIdentifier),
		string(runner.PackageSPDXIdentifier) + " DEPENDS_ON " + string(sync.PackageSPDXIdentifier),
	} {
		assert.Contains(t, rels, want)
	}
	assert.NotContains(t, rels, string(helper.PackageSPDXIdentifier)+" DEPENDS_ON "+string(sync.PackageSPDXIdentifier))
	// Shared modules and the shared stdlib appear once: image, base, OS,
	// 4 OS packages, 2 binaries, 4 modules, stdlib.
	assert.Len(t, d.Packages, 14)
	assert.Len(t, rels, 1+1+1+4+2+3+4+2)
}

// The same spec gives the same bytes, whatever order its lists come in.
func TestSBOMDeterministic(t *testing.T) {
	spec := fullSpec(t)
	first, err := SBOM(spec)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		s := fullSpec(t)
		r.Shuffle(len(s.Binaries), func(i, j int) { s.Binaries[i], s.Binaries[j] = s.Binaries[j], s.Binaries[i] })
		r.Shuffle(len(s.OS.Packages), func(i, j int) { s.OS.Packages[i], s.OS.Packages[j] = s.OS.Packages[j], s.OS.Packages[i] })
		for _, b := range s.Binaries {
			deps := b.Info.Deps
			r.Shuffle(len(deps), func(i, j int) { deps[i], deps[j] = deps[j], deps[i] })
		}
		again, err := SBOM(s)
		require.NoError(t, err)
		require.Equal(t, string(first), string(again))
	}

	// Another epoch changes the creation time and so the namespace.
	spec.Created = epoch.Add(time.Hour)
	later, err := SBOM(spec)
	require.NoError(t, err)
	a, b := parseSPDX(t, first), parseSPDX(t, later)
	assert.NotEqual(t, a.DocumentNamespace, b.DocumentNamespace)
	assert.Equal(t, "2025-03-20T11:11:12Z", b.CreationInfo.Created)
}

func TestSBOMWithoutBaseOrOS(t *testing.T) {
	spec := fullSpec(t)
	spec.Base = Base{Ref: "scratch"}
	spec.OS = OS{}
	out, err := SBOM(spec)
	require.NoError(t, err)
	d := parseSPDX(t, out)
	for _, r := range related(d) {
		assert.NotContains(t, r, "DESCENDANT_OF")
	}
	// Packages without an os-release hang off the image and take the
	// manager's default namespace.
	pkgs, err := ParseDpkgStatus(strings.NewReader(dpkgSnippet))
	require.NoError(t, err)
	spec.OS = OS{Packages: pkgs}
	out, err = SBOM(spec)
	require.NoError(t, err)
	d = parseSPDX(t, out)
	libc := spdxPkg(t, d, "pkg:deb/debian/libc6@2.36-9%2Bdeb12u8?arch=amd64&upstream=glibc")
	assert.Equal(t, "built package from: glibc 2.36-9+deb12u8", libc.PackageSourceInfo)
	assert.Contains(t, related(d), string(d.Packages[0].PackageSPDXIdentifier)+" CONTAINS "+string(libc.PackageSPDXIdentifier))
}

func TestSBOMBadInput(t *testing.T) {
	tests := []struct {
		name string
		edit func(*SBOMSpec)
		want string
	}{
		{"no digest", func(s *SBOMSpec) { s.Image.Manifest.Digest = v1.Hash{} }, "no manifest digest"},
		{"no platform", func(s *SBOMSpec) { s.Image.Manifest.Platform = nil }, "has no platform"},
		{"no name", func(s *SBOMSpec) { s.Image.Name = "" }, "without a name"},
		{"base without digest", func(s *SBOMSpec) { s.Base.Digest = v1.Hash{} }, "base registry.example.com/base/runner-helper:alpine: no digest"},
		{"bad base reference", func(s *SBOMSpec) { s.Base.Ref = "Not A Ref" }, "image reference"},
		{"binary without build info", func(s *SBOMSpec) { s.Binaries[0].Info = nil }, "no build info"},
		{"binary without hash", func(s *SBOMSpec) { s.Binaries[1].SHA256 = v1.Hash{} }, "no SHA256"},
		{"same path twice", func(s *SBOMSpec) { s.Binaries[1].Path = s.Binaries[0].Path }, "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := fullSpec(t)
			tt.edit(&spec)
			_, err := SBOM(spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestSBOMStatement(t *testing.T) {
	spec := fullSpec(t)
	doc, err := SBOM(spec)
	require.NoError(t, err)
	s, err := SBOMStatement(spec.Image, doc)
	require.NoError(t, err)
	st := parseStatement(t, s)
	assert.Equal(t, attestspec.PredicateSPDX, st.GetPredicateType())
	require.Len(t, st.GetSubject(), 1)
	assert.Equal(t, map[string]string{"sha256": spec.Image.Manifest.Digest.Hex}, st.GetSubject()[0].GetDigest())
	assert.Equal(t, spec.Image.purl().String(), st.GetSubject()[0].GetName())

	// The predicate is the document itself.
	var env struct{ Predicate json.RawMessage }
	require.NoError(t, json.Unmarshal(s.JSON, &env))
	assert.JSONEq(t, string(doc), string(env.Predicate))
	assert.NotContains(t, string(s.JSON), `\u0026`, "purls keep their & readable")
	assert.Equal(t, s.Digest(), hash(t, string(s.JSON)))

	_, err = SBOMStatement(spec.Image, []byte("{not json"))
	assert.ErrorContains(t, err, "not JSON")
}

// The schema check can fail: the SBOM, broken in ways the SPDX 2.3 JSON
// schema forbids, is refused, naming where.
func TestSBOMSchemaRefusesBrokenDocuments(t *testing.T) {
	out, err := SBOM(fullSpec(t))
	require.NoError(t, err)
	require.NoError(t, testkit.SPDXSchemaError(out))
	// A Debian base's SBOM conforms too (the golden one is Alpine's).
	debian := fullSpec(t)
	debian.OS.Release = OSRelease{ID: "debian", VersionID: "12", VersionCodename: "bookworm"}
	debian.OS.Packages, err = ParseDpkgStatus(strings.NewReader(dpkgSnippet))
	require.NoError(t, err)
	deb, err := SBOM(debian)
	require.NoError(t, err)
	require.Contains(t, string(deb), "pkg:deb/debian/zlib1g@")
	require.NoError(t, testkit.SPDXSchemaError(deb))
	for _, tc := range []struct {
		name, where string
		mutate      func(doc map[string]any)
	}{
		{"a package without SPDXID", "/packages/0", func(doc map[string]any) {
			delete(pkgAt(doc, 0), "SPDXID")
		}},
		{"a checksum algorithm the schema does not know", "/packages/0/checksums/0/algorithm", func(doc map[string]any) {
			pkgAt(doc, 0)["checksums"].([]any)[0].(map[string]any)["algorithm"] = "SHA-256"
		}},
		{"the spec text's spelling of the OS purpose", "primaryPackagePurpose", func(doc map[string]any) {
			for i := range doc["packages"].([]any) {
				if p := pkgAt(doc, i); p["primaryPackagePurpose"] == "OPERATING_SYSTEM" {
					p["primaryPackagePurpose"] = "OPERATING-SYSTEM"
				}
			}
		}},
		{"no creationInfo", "creationInfo", func(doc map[string]any) { delete(doc, "creationInfo") }},
		{"a relationship type outside the list", "/relationships/0/relationshipType", func(doc map[string]any) {
			doc["relationships"].([]any)[0].(map[string]any)["relationshipType"] = "DEPENDS-ON"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(out, &doc))
			tc.mutate(doc)
			broken, err := json.Marshal(doc)
			require.NoError(t, err)
			err = testkit.SPDXSchemaError(broken)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.where)
		})
	}
}

func pkgAt(doc map[string]any, i int) map[string]any {
	return doc["packages"].([]any)[i].(map[string]any)
}
