package verify

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// windowsExe compiles a tiny Go program for the Windows platform s.
func windowsExe(t *testing.T, s string) []byte {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/helper\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"helper\") }\n"), 0o644))
	p, err := platform.Parse(s)
	require.NoError(t, err)
	env, err := platform.GoEnv(p)
	require.NoError(t, err)
	out := filepath.Join(dir, "helper.exe")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0"), env...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	exe, err := os.ReadFile(out)
	require.NoError(t, err)
	return exe
}

// windowsHelper is base plus one Windows-format layer holding exe at
// C:\helper\helper.exe.
func windowsHelper(t *testing.T, base v1.Image, exe []byte) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "Files/", Typeflag: tar.TypeDir, Mode: 0o555},
		{Name: "Files/helper/", Typeflag: tar.TypeDir, Mode: 0o555},
		{Name: "Files/helper/helper.exe", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(exe))},
		{Name: "Hives/", Typeflag: tar.TypeDir, Mode: 0o555},
	} {
		h.Format = tar.FormatPAX
		require.NoError(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write(exe)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	img, err := mutate.Append(base, mutate.Addendum{Layer: static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer), MediaType: types.OCIUncompressedLayer})
	require.NoError(t, err)
	return img
}

func windowsIndex(t *testing.T, entries map[string]v1.Image, order ...string) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, s := range order {
		p, err := platform.Parse(s)
		require.NoError(t, err)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: entries[s], Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}

func checksOf(r *Report, name string) []Check {
	var out []Check
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if c.Name == name {
				out = append(out, c)
			}
		}
	}
	return out
}

// Two Windows builds in one index pass every check, with the foreign base
// layers never read; a Windows node of each build finds its entry.
func TestVerifyWindowsEntries(t *testing.T) {
	var reads testkit.ForeignReads
	amd64 := windowsExe(t, "windows/amd64")
	entries := map[string]v1.Image{
		"windows/amd64:10.0.17763.5830": windowsHelper(t, testkit.WindowsBase(t, "10.0.17763.5830", &reads), amd64),
		"windows/amd64:10.0.20348.2340": windowsHelper(t, testkit.WindowsBase(t, "10.0.20348.2340", &reads), amd64),
	}
	idx := windowsIndex(t, entries, "windows/amd64:10.0.17763.5830", "windows/amd64:10.0.20348.2340")
	nodes := []Node{{Name: "w19", OS: "windows", Arch: "amd64", OSVersion: "10.0.17763"}, {Name: "w22", OS: "windows", Arch: "amd64", OSVersion: "10.0.20348"}}
	r, err := Index(context.Background(), idx, Options{
		Platforms: mustPlatforms(t, "windows/amd64:10.0.17763,windows/amd64:10.0.20348"),
		Nodes:     nodes, Run: true, TempDir: t.TempDir(),
	})
	require.NoError(t, err)
	assert.Empty(t, r.Problems)
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			assert.True(t, c.OK, "%s: %+v", p.Platform, c)
		}
	}
	arch := checksOf(r, CheckArch)
	require.Len(t, arch, 2)
	assert.Equal(t, "1 Windows executable(s) are windows/amd64 console programs (1 foreign base layer(s) referenced by URL, not read)", arch[0].Reason)
	run := checksOf(r, CheckRun)
	require.Len(t, run, 2)
	assert.True(t, run[0].Warning)
	assert.Contains(t, run[0].Reason, "Windows entries are not started here")
	assert.Zero(t, reads.Load(), "a foreign layer was read")
}

// Each wrong Windows entry fails with what it is and what was expected.
func TestVerifyWindowsEntriesRefuse(t *testing.T) {
	amd64, arm64 := windowsExe(t, "windows/amd64"), windowsExe(t, "windows/arm64")
	base := testkit.WindowsBase(t, "10.0.20348.2340", nil)
	tests := []struct {
		name, listed string
		img          v1.Image
		check, want  string
	}{
		{"arm64 binary", "windows/amd64:10.0.20348.2340", windowsHelper(t, base, arm64), CheckArch, "binary is PE executable for arm64 (console), not windows/amd64"},
		{"no os.version listed", "windows/amd64", windowsHelper(t, base, amd64), CheckConfig, "the index lists windows/amd64 without os.version"},
		{"another build listed", "windows/amd64:10.0.17763", windowsHelper(t, base, amd64), CheckConfig, "config says windows/amd64:10.0.20348.2340 but the index lists it as windows/amd64:10.0.17763"},
		{"no exe", "windows/amd64:10.0.20348.2340", base, CheckArch, "hold no .exe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Index(context.Background(), windowsIndex(t, map[string]v1.Image{tt.listed: tt.img}, tt.listed), Options{TempDir: t.TempDir()})
			require.NoError(t, err)
			var reasons []string
			for _, c := range checksOf(r, tt.check) {
				if !c.OK {
					reasons = append(reasons, c.Path+" "+c.Reason)
				}
			}
			require.NotEmpty(t, reasons)
			assert.Contains(t, strings.Join(reasons, "\n"), tt.want)
			if tt.name == "arm64 binary" {
				assert.Contains(t, reasons[0], `C:\helper\helper.exe`)
			}
		})
	}
}

// A Windows entry's attestations are checked as a Linux entry's: an SBOM
// and a provenance about the entry, the SBOM naming the .exe where the
// image holds it (/helper/helper.exe) with its build info's modules, the
// provenance naming the base. A good pair passes with no warning; each
// wrong or missing one fails.
func TestVerifyWindowsAttestations(t *testing.T) {
	var reads testkit.ForeignReads
	exe := windowsExe(t, "windows/amd64")
	bi, err := buildinfo.Read(bytes.NewReader(exe))
	require.NoError(t, err)
	modules := goModules(bi)
	const bin, listed = "/helper/helper.exe", "windows/amd64:10.0.20348.2340"
	base := "sha256:" + strings.Repeat("b", 64)
	img := mutate.Annotations(windowsHelper(t, testkit.WindowsBase(t, "10.0.20348.2340", &reads), exe),
		map[string]string{specsv1.AnnotationBaseImageDigest: base}).(v1.Image)
	d, err := img.Digest()
	require.NoError(t, err)
	good := [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, sbomFor(bin, modules...)), statementJSON(t, d, attestspec.PredicateSLSA, provenanceWith(base))}
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("c", 64)}
	for _, tc := range []struct {
		name       string
		statements [][]byte
		want       string
	}{
		{name: "agreeing with the entry", statements: good},
		{name: "none", want: "no attestations: neither the index nor the registry's referrers hold an SBOM or provenance for " + d.String()},
		{name: "no SBOM", statements: good[1:], want: "no SBOM"},
		{name: "the exe missing", statements: [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, sbomFor("/other/other.exe", modules...)), good[1]},
			want: bin + ": Go binary missing from the SBOM"},
		{name: "a module the exe lacks", statements: [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, sbomFor(bin, append([]string{"golang.org/x/sys@v0.1.0"}, modules...)...)), good[1]},
			want: bin + ": the SBOM's Go modules differ from the binary's build info"},
		{name: "about another manifest", statements: [][]byte{statementJSON(t, other, attestspec.PredicateSPDX, sbomFor(bin, modules...)), good[1]},
			want: "https://spdx.dev/Document"},
		{name: "another base", statements: [][]byte{good[0], statementJSON(t, d, attestspec.PredicateSLSA, provenanceWith(other.String()))},
			want: "the provenance's base images [" + other.String() + "] are not the manifest's org.opencontainers.image.base.digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := windowsIndex(t, map[string]v1.Image{listed: img}, listed)
			if tc.statements != nil {
				idx = mutate.AppendManifests(idx, attestationManifest(t, img, tc.statements...))
			}
			r, err := Index(context.Background(), idx, Options{TempDir: t.TempDir(), Attestations: true})
			require.NoError(t, err)
			got := failures(r)
			attest := checksOf(r, CheckAttest)
			require.NotEmpty(t, attest)
			if tc.want == "" {
				assert.Empty(t, got)
				for _, c := range attest {
					assert.False(t, c.Warning, "%+v", c)
				}
				assert.Contains(t, attest[0].Reason, "SBOM and provenance about "+d.String())
				return
			}
			require.NotEmpty(t, got)
			assert.Contains(t, strings.Join(got, "\n"), tc.want)
			assert.True(t, strings.HasPrefix(got[0], listed+" "+CheckAttest+": "), "%q", got)
		})
	}
	assert.Zero(t, reads.Load(), "a foreign layer was read")
}
