package verify

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
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
)

// statementJSON is an in-toto statement about subject.
func statementJSON(t testing.TB, subject v1.Hash, predicateType string, predicate any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": "x", "digest": map[string]string{subject.Algorithm: subject.Hex}}},
		"predicateType": predicateType,
		"predicate":     predicate,
	})
	require.NoError(t, err)
	return b
}

// sbomFor is an SPDX document listing the binary at path, depending on
// modules (name@version) and stdlib.
func sbomFor(path string, modules ...string) any {
	pkgs := []any{
		map[string]any{"SPDXID": "SPDXRef-Image", "name": "img"},
		map[string]any{"SPDXID": "SPDXRef-Bin", "name": "example.com/hello", "packageFileName": path, "primaryPackagePurpose": "APPLICATION"},
		map[string]any{"SPDXID": "SPDXRef-Std", "name": "stdlib", "versionInfo": "go1.26.8", "primaryPackagePurpose": "LIBRARY"},
	}
	rels := []any{
		map[string]any{"spdxElementId": "SPDXRef-Image", "relationshipType": "CONTAINS", "relatedSpdxElement": "SPDXRef-Bin"},
		map[string]any{"spdxElementId": "SPDXRef-Bin", "relationshipType": "DEPENDS_ON", "relatedSpdxElement": "SPDXRef-Std"},
	}
	for i, m := range modules {
		name, ver, _ := strings.Cut(m, "@")
		id := fmt.Sprintf("SPDXRef-Mod-%d", i)
		pkgs = append(pkgs, map[string]any{"SPDXID": id, "name": name, "versionInfo": ver, "primaryPackagePurpose": "LIBRARY"})
		rels = append(rels, map[string]any{"spdxElementId": "SPDXRef-Bin", "relationshipType": "DEPENDS_ON", "relatedSpdxElement": id})
	}
	return map[string]any{"spdxVersion": "SPDX-2.3", "packages": pkgs, "relationships": rels}
}

// withBaseBinary adds to an sbomFor document a base package the image is
// a DESCENDANT_OF, containing the Go binary at path (with no modules);
// comment is the base package's.
func withBaseBinary(doc any, path, comment string) any {
	d := doc.(map[string]any)
	d["packages"] = append(d["packages"].([]any),
		map[string]any{"SPDXID": "SPDXRef-Base", "name": "busybox", "primaryPackagePurpose": "CONTAINER", "comment": comment},
		map[string]any{"SPDXID": "SPDXRef-BaseBin", "name": "example.com/hello", "packageFileName": path, "primaryPackagePurpose": "APPLICATION"})
	d["relationships"] = append(d["relationships"].([]any),
		map[string]any{"spdxElementId": "SPDXRef-Image", "relationshipType": "DESCENDANT_OF", "relatedSpdxElement": "SPDXRef-Base"},
		map[string]any{"spdxElementId": "SPDXRef-Base", "relationshipType": "CONTAINS", "relatedSpdxElement": "SPDXRef-BaseBin"})
	return d
}

// provenanceWith names bases as the build's base images.
func provenanceWith(bases ...string) any {
	deps := []any{map[string]any{"uri": "pkg:golang/stdlib@1.26.8", "name": "go1.26.8"}}
	for _, b := range bases {
		deps = append(deps, map[string]any{"uri": "pkg:oci/busybox@" + b, "digest": map[string]string{"sha256": strings.TrimPrefix(b, "sha256:")}})
	}
	return map[string]any{"buildDefinition": map[string]any{"buildType": "x", "resolvedDependencies": deps}}
}

// attestationManifest is a BuildKit-style attestation manifest about img
// holding statements, and its index entry.
func attestationManifest(t testing.TB, img v1.Image, statements ...[]byte) mutate.IndexAddendum {
	t.Helper()
	d, err := img.Digest()
	require.NoError(t, err)
	size, err := img.Size()
	require.NoError(t, err)
	a := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	for _, s := range statements {
		a, err = mutate.AppendLayers(a, static.NewLayer(s, attestspec.MediaTypeInToto))
		require.NoError(t, err)
	}
	a = mutate.Subject(a, v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size}).(v1.Image)
	return mutate.IndexAddendum{Add: a, Descriptor: v1.Descriptor{
		Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
		Annotations: map[string]string{attestspec.AnnotationReferenceType: attestspec.ReferenceTypeAttestation, attestspec.AnnotationReferenceDigest: d.String()},
	}}
}

// joinProvenance is the predicate of helperbuild index's provenance: its
// one dependency the source manifest, named by the source as written.
func joinProvenance() any {
	return map[string]any{"buildDefinition": map[string]any{"buildType": attestspec.BuildTypeJoin,
		"resolvedDependencies": []any{map[string]any{"uri": "registry.example.com/ref/app:v1", "digest": map[string]string{"sha256": strings.Repeat("d", 64)}}}}}
}

func TestAttestations(t *testing.T) {
	bi, err := buildinfo.Read(bytes.NewReader(bins["arm64"]))
	require.NoError(t, err)
	modules := goModules(bi)
	const bin = "/usr/bin/gitlab-runner-helper"
	base := "sha256:" + strings.Repeat("b", 64)
	image := func(t testing.TB) v1.Image {
		img := goodHelper(t, arm64, "arm64")
		return mutate.Annotations(img, map[string]string{specsv1.AnnotationBaseImageDigest: base}).(v1.Image)
	}
	index := func(t testing.TB, statements func(d v1.Hash) [][]byte) v1.ImageIndex {
		img := image(t)
		d, err := img.Digest()
		require.NoError(t, err)
		idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
			mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &arm64}})
		if statements != nil {
			idx = mutate.AppendManifests(idx, attestationManifest(t, img, statements(d)...))
		}
		return roundTrip(t, idx)
	}
	// The base's busybox is the same Go program (no modules): the SBOM
	// must list it, contained in the base package.
	const baseBin = "/bin/busybox"
	sbomGood := func() any { return withBaseBinary(sbomFor(bin, modules...), baseBin, "") }
	good := func(d v1.Hash) [][]byte {
		return [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, sbomGood()), statementJSON(t, d, attestspec.PredicateSLSA, provenanceWith(base))}
	}
	withSBOM := func(sbom any) func(d v1.Hash) [][]byte {
		return func(d v1.Hash) [][]byte {
			return [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, sbom), good(d)[1]}
		}
	}
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("c", 64)}
	for _, tc := range []struct {
		name       string
		statements func(d v1.Hash) [][]byte
		want       []string
	}{
		{name: "in the index, agreeing with the image", statements: good},
		{name: "none", want: []string{"linux/arm64 attestations: no attestations: neither the index nor the registry's referrers hold an SBOM or provenance for "}},
		{name: "no provenance", statements: func(d v1.Hash) [][]byte { return good(d)[:1] },
			want: []string{"linux/arm64 attestations: no provenance (in-toto https://slsa.dev/provenance/v1) for "}},
		{name: "the base's Go binary missing", statements: withSBOM(sbomFor(bin, modules...)),
			want: []string{"linux/arm64 attestations: " + baseBin + ": Go binary of the base (github.com/helperbuild/helperbuild/internal/verify/testdata/hello) missing from the SBOM"}},
		{name: "the base's Go binary under another path", statements: withSBOM(withBaseBinary(sbomFor(bin, modules...), "/usr/bin/other", "")),
			want: []string{"linux/arm64 attestations: " + baseBin + ": Go binary of the base (github.com/helperbuild/helperbuild/internal/verify/testdata/hello) missing from the SBOM"}},
		{name: "the base's Go binary named as not read", statements: withSBOM(withBaseBinary(sbomFor(bin, modules...), "/usr/bin/other",
			"build info not read from 1 ELF executables (pre-Go 1.18 build info, or past 1000 Go binaries): "+baseBin))},
		{name: "about another manifest", statements: func(d v1.Hash) [][]byte {
			return [][]byte{statementJSON(t, other, attestspec.PredicateSPDX, sbomGood()), good(d)[1]}
		}, want: []string{"linux/arm64 attestations: https://spdx.dev/Document (attestation manifest sha256:"}},
		{name: "a module the binary lacks", statements: func(d v1.Hash) [][]byte {
			return [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, withBaseBinary(sbomFor(bin, append([]string{"golang.org/x/sys@v0.1.0"}, modules...)...), baseBin, "")), good(d)[1]}
		}, want: []string{"linux/arm64 attestations: " + bin + ": the SBOM's Go modules differ from the binary's build info: not in the SBOM [], not in the binary [golang.org/x/sys@v0.1.0]"}},
		{name: "the binary missing", statements: func(d v1.Hash) [][]byte {
			return [][]byte{statementJSON(t, d, attestspec.PredicateSPDX, withBaseBinary(sbomFor("/usr/bin/other"), baseBin, "")), good(d)[1]}
		}, want: []string{"linux/arm64 attestations: " + bin + ": Go binary missing from the SBOM"}},
		{name: "a join's provenance before the build's: the build's is checked", statements: func(d v1.Hash) [][]byte {
			return [][]byte{statementJSON(t, d, attestspec.PredicateSLSA, joinProvenance()), good(d)[0], good(d)[1]}
		}},
		{name: "a join's provenance alone stands in, and has no base", statements: func(d v1.Hash) [][]byte {
			return [][]byte{good(d)[0], statementJSON(t, d, attestspec.PredicateSLSA, joinProvenance())}
		}, want: []string{"linux/arm64 attestations: the provenance's base images [] are not the manifest's org.opencontainers.image.base.digest [" + base + "]"}},
		{name: "another base", statements: func(d v1.Hash) [][]byte {
			return [][]byte{good(d)[0], statementJSON(t, d, attestspec.PredicateSLSA, provenanceWith(other.String()))}
		}, want: []string{"linux/arm64 attestations: the provenance's base images [" + other.String() + "] are not the manifest's org.opencontainers.image.base.digest [" + base + "]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Index(context.Background(), index(t, tc.statements), Options{Platforms: []v1.Platform{arm64}, Attestations: true})
			require.NoError(t, err)
			got := failures(r)
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				assert.True(t, strings.HasPrefix(got[i], w), "%q\nwant prefix %q", got[i], w)
			}
			assert.Len(t, r.Platforms, 1, "the attestation entry is no platform")
		})
	}

	// Without an attestation in the index, the referrers are asked.
	img := image(t)
	d, err := img.Digest()
	require.NoError(t, err)
	att := attestationManifest(t, img, good(d)...).Add.(v1.Image)
	asked := 0
	r, err := Index(context.Background(), index(t, nil), Options{Attestations: true, Referrers: func(_ context.Context, got v1.Hash) ([]v1.Image, error) {
		asked++
		assert.Equal(t, d, got)
		return []v1.Image{att}, nil
	}})
	require.NoError(t, err)
	assert.Empty(t, failures(r))
	assert.Equal(t, 1, asked)

	// One platform's manifest alone (a per-platform tag) reaches only its
	// referrers: without them, the failure says to verify the index.
	r, err = Image(context.Background(), img, Options{Platforms: []v1.Platform{arm64}, Attestations: true,
		Referrers: func(context.Context, v1.Hash) ([]v1.Image, error) { return nil, nil }})
	require.NoError(t, err)
	got := failures(r)
	require.Len(t, got, 1, "%q", got)
	assert.Contains(t, got[0], "not reachable from one platform's manifest: verify the index's tag")
}
