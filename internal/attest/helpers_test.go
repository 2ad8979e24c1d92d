package attest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	packageurl "github.com/package-url/packageurl-go"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdxlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got (compact JSON) with testdata/NAME.golden, which holds
// it indented; -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, got, "", "  "))
	pretty.WriteByte('\n')
	file := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(file, pretty.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), pretty.String(), "%s differs; if the change is meant, run go test ./internal/attest -update", file)
}

// spdxElementID is what SPDX 2.3 allows after "SPDXRef-".
var spdxElementID = regexp.MustCompile(`^[A-Za-z0-9.-]+$`)

// parseSPDX reads doc back with spdx/tools-golang and checks it the way a
// consumer would: it parses as SPDX 2.3, every relationship names an
// element of the document (spdxlib.ValidateDocument), it conforms to the
// SPDX project's SPDX 2.3 JSON schema (testkit.SPDXSchemaValid), every
// element ID is valid and unique, and every purl parses with packageurl-go.
func parseSPDX(t *testing.T, doc []byte) *spdx.Document {
	t.Helper()
	testkit.SPDXSchemaValid(t, doc)
	d, err := spdxjson.Read(bytes.NewReader(doc))
	require.NoError(t, err)
	assert.Equal(t, "SPDX-2.3", d.SPDXVersion)
	assert.Equal(t, "CC0-1.0", d.DataLicense)
	require.NoError(t, spdxlib.ValidateDocument(d))
	seen := map[spdx.ElementID]bool{}
	for _, p := range d.Packages {
		id := p.PackageSPDXIdentifier
		assert.Regexp(t, spdxElementID, string(id), "package %s", p.PackageName)
		assert.False(t, seen[id], "ID %s used twice", id)
		seen[id] = true
		assert.NotEmpty(t, p.PackageDownloadLocation, "package %s: downloadLocation is mandatory", id)
		for _, ref := range p.PackageExternalReferences {
			if ref.RefType != "purl" {
				continue
			}
			_, err := packageurl.FromString(ref.Locator)
			assert.NoError(t, err, "purl %s", ref.Locator)
		}
	}
	for _, r := range d.Relationships {
		assert.Regexp(t, spdxElementID, string(r.RefA.ElementRefID))
		assert.Regexp(t, spdxElementID, string(r.RefB.ElementRefID))
	}
	assert.True(t, strings.HasPrefix(d.DocumentNamespace, spdxNamespaceBase), d.DocumentNamespace)
	return d
}

// spdxPkg finds the package whose purl is want.
func spdxPkg(t *testing.T, d *spdx.Document, want string) *spdx.Package {
	t.Helper()
	for _, p := range d.Packages {
		for _, ref := range p.PackageExternalReferences {
			if ref.RefType == "purl" && ref.Locator == want {
				return p
			}
		}
	}
	var have []string
	for _, p := range d.Packages {
		for _, ref := range p.PackageExternalReferences {
			have = append(have, ref.Locator)
		}
	}
	t.Fatalf("no package with purl %s; have:\n%s", want, strings.Join(have, "\n"))
	return nil
}

// related lists "A TYPE B" for every relationship of d, IDs without prefix.
func related(d *spdx.Document) []string {
	var out []string
	for _, r := range d.Relationships {
		out = append(out, string(r.RefA.ElementRefID)+" "+r.Relationship+" "+string(r.RefB.ElementRefID))
	}
	return out
}

// parseStatement reads s back with the in-toto attestation Go bindings and
// validates it.
func parseStatement(t *testing.T, s Statement) *intoto.Statement {
	t.Helper()
	var st intoto.Statement
	require.NoError(t, protojson.Unmarshal(s.JSON, &st), "%s", s.JSON)
	require.NoError(t, st.Validate())
	assert.Equal(t, intoto.StatementTypeUri, st.GetType())
	assert.Equal(t, s.PredicateType, st.GetPredicateType())
	return &st
}

// parseProvenance reads a provenance statement's predicate back as the
// SLSA v1 proto (unknown fields are an error) and validates it.
func parseProvenance(t *testing.T, s Statement) *slsa.Provenance {
	t.Helper()
	st := parseStatement(t, s)
	raw, err := protojson.Marshal(st.GetPredicate())
	require.NoError(t, err)
	var p slsa.Provenance
	require.NoError(t, protojson.Unmarshal(raw, &p), "%s", raw)
	require.NoError(t, p.Validate())
	return &p
}

// hash is a sha256 digest made from seed, for fixtures.
func hash(t testing.TB, seed string) v1.Hash {
	t.Helper()
	h, _, err := v1.SHA256(strings.NewReader(seed))
	require.NoError(t, err)
	return h
}

// testImage is a platform image fixture.
func testImage(t testing.TB, p v1.Platform) Image {
	t.Helper()
	return Image{
		Name: "gitlab-runner-helper",
		Manifest: v1.Descriptor{
			MediaType: types.OCIManifestSchema1,
			Digest:    hash(t, "manifest "+p.Architecture+p.Variant),
			Size:      1234,
			Platform:  &p,
		},
	}
}

// moduleHash is the locator of p's GoModuleHashRef externalRef, "" if none.
func moduleHash(p *spdx.Package) string {
	for _, r := range p.PackageExternalReferences {
		if r.Category == "OTHER" && r.RefType == GoModuleHashRef {
			return r.Locator
		}
	}
	return ""
}
