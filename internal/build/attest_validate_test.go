package build

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdxlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Every attestation of a real build, read by tools other than
// helperbuild's: each SBOM (the statement's predicate, and the plain SPDX
// document referrers mode also pushes) against the SPDX project's SPDX 2.3
// JSON schema (testkit.SPDXSchemaValid) and with the SPDX project's Go tools
// (spdx/tools-golang parses it as SPDX 2.3 and spdxlib.ValidateDocument
// checks its elements and relationships), each provenance with in-toto's attestation bindings
// (Statement and SLSA v1 Provenance Validate(), unknown fields refused);
// and each Go binary's modules in the SBOM, the image's own and the base's,
// are what `go version -m` prints for the file unpacked from the image.
func TestEveryAttestationValidates(t *testing.T) {
	lfsBytes := goProgramWithDeps(t)
	base := testkit.Registry(t) + "/base/alpine-lfs:3"
	r, err := name.ParseReference(base)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, alpineIndexWith(t, []tartest.Entry{tartest.File("usr/bin/git-lfs", 0o755, lfsBytes)},
		"linux/amd64", "linux/arm64")))

	for _, mode := range []product.AttestMode{product.AttestIndex, product.AttestReferrers} {
		res, err := Build(context.Background(), attestPlan(t, base), attestOptions(t, mode))
		require.NoError(t, err)
		img := res.Images[0]
		for _, p := range img.Platforms {
			require.NotNil(t, p.Attestation)
			doc := validSPDX(t, p.Attestation.SBOM.JSON)
			testkit.SPDXSchemaValid(t, p.Attestation.SPDX)
			validProvenance(t, p.Attestation.Provenance.JSON)

			child, err := img.Index.Image(p.Digest)
			require.NoError(t, err)
			layers, err := child.Layers()
			require.NoError(t, err)
			files := map[string]bool{}
			for _, pk := range doc.Packages {
				if pk.PrimaryPackagePurpose == "APPLICATION" {
					files[pk.PackageFileName] = true
				}
			}
			require.Contains(t, files, "/usr/bin/git-lfs")
			unpacked := unpackFiles(t, layers, files)
			require.Contains(t, unpacked, "/usr/bin/git-lfs")
			require.Equal(t, []string{"golang.org/x/sync@v0.25.0=h1:dJnifr0nMV8/SBnBvdo4eSGGnrc3O4FFx6IqvtLcmRs="},
				goVersionM(t, unpacked["/usr/bin/git-lfs"]), "the base's binary compiles in a module with an h1: sum")
			for path, file := range unpacked {
				assert.Equal(t, goVersionM(t, file), sbomModules(doc, path), "%s %s: the SBOM's modules of %s against go version -m", mode, p.Platform, path)
			}
			assert.Len(t, unpacked, len(files), "every binary the SBOM names is in the image")
		}
	}
}

// goProgramWithDeps builds, offline from the module cache, a program that
// compiles in golang.org/x/sync (a module with a version and an h1: sum).
func goProgramWithDeps(t *testing.T) []byte {
	t.Helper()
	sum, err := os.ReadFile("../../go.sum")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, "golang.org/x/sync v0.25.0") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module example.com/lfs\n\ngo 1.24\n\nrequire golang.org/x/sync v0.25.0\n",
		"go.sum":  strings.Join(lines, "\n") + "\n",
		"main.go": "package main\n\nimport \"golang.org/x/sync/errgroup\"\n\nfunc main() { var g errgroup.Group; _ = g.Wait() }\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	bin := filepath.Join(dir, "lfs")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(bin)
	require.NoError(t, err)
	return b
}

// sbomModules are the modules the SBOM says the binary at path DEPENDS_ON,
// as path@version=h1 sum, the standard library left out, sorted.
func sbomModules(d *spdx.Document, path string) []string {
	byID := map[spdx.ElementID]*spdx.Package{}
	var bin spdx.ElementID
	for _, p := range d.Packages {
		byID[p.PackageSPDXIdentifier] = p
		if p.PrimaryPackagePurpose == "APPLICATION" && p.PackageFileName == path {
			bin = p.PackageSPDXIdentifier
		}
	}
	var out []string
	for _, r := range d.Relationships {
		m := byID[r.RefB.ElementRefID]
		if r.RefA.ElementRefID != bin || r.Relationship != "DEPENDS_ON" || m == nil || m.PackageName == "stdlib" {
			continue
		}
		sum := ""
		for _, ref := range m.PackageExternalReferences {
			if ref.RefType == attest.GoModuleHashRef {
				sum = ref.Locator
			}
		}
		out = append(out, m.PackageName+"@"+m.PackageVersion+"="+sum)
	}
	return sortedNonNil(out)
}

func sortedNonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	slices.Sort(s)
	return s
}

func srcName(src rootfs.Source) string { return fmt.Sprintf("%d-%d", src.Layer, src.Seq) }

// validSPDX validates an SBOM statement's predicate against the SPDX 2.3
// JSON schema, parses it with spdx/tools-golang and validates it.
func validSPDX(t *testing.T, statement []byte) *spdx.Document {
	t.Helper()
	var st struct {
		Predicate json.RawMessage `json:"predicate"`
	}
	require.NoError(t, json.Unmarshal(statement, &st))
	testkit.SPDXSchemaValid(t, st.Predicate)
	d, err := spdxjson.Read(bytes.NewReader(st.Predicate))
	require.NoError(t, err)
	require.Equal(t, "SPDX-2.3", d.SPDXVersion)
	require.NoError(t, spdxlib.ValidateDocument(d))
	return d
}

// validProvenance reads a provenance statement with in-toto's bindings.
func validProvenance(t *testing.T, statement []byte) {
	t.Helper()
	var st intoto.Statement
	require.NoError(t, protojson.Unmarshal(statement, &st))
	require.NoError(t, st.Validate())
	raw, err := protojson.Marshal(st.GetPredicate())
	require.NoError(t, err)
	var p slsa.Provenance
	require.NoError(t, protojson.Unmarshal(raw, &p))
	require.NoError(t, p.Validate())
}

// unpackFiles writes the files at paths (as the flattened image holds them)
// to a temporary directory and returns where each went.
func unpackFiles(t *testing.T, layers []v1.Layer, paths map[string]bool) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	fs, err := rootfs.FlattenEach(t.Context(), layers, func(src rootfs.Source, p string, _ *tar.Header, r io.Reader) error {
		if !paths[p] {
			return nil
		}
		file := filepath.Join(dir, strings.ReplaceAll(p, "/", "_")+"-"+srcName(src))
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(f, r)
		out[p+"\x00"+srcName(src)] = file
		return err
	})
	require.NoError(t, err)
	final := map[string]string{}
	for p := range paths {
		if info, ok := fs.Lookup(p); ok && info.IsRegular() {
			final[p] = out[p+"\x00"+srcName(info.Source)]
		}
	}
	return final
}

// goVersionM is `go version -m FILE`'s modules as path@version=sum (a
// replacement for its module), sorted.
func goVersionM(t *testing.T, file string) []string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "version", "-m", file)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	b, err := cmd.Output()
	require.NoError(t, err)
	var mods []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimPrefix(line, "\t"), "\t")
		switch {
		case len(f) >= 3 && f[0] == "dep":
			mods = append(mods, f[1]+"@"+f[2]+"="+strings.Join(f[3:], ""))
		case len(f) >= 3 && f[0] == "=>":
			mods[len(mods)-1] = f[1] + "@" + f[2] + "=" + strings.Join(f[3:], "")
		}
	}
	return sortedNonNil(mods)
}
