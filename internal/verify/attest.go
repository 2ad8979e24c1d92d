package verify

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
)

// maxStatementBytes bounds one in-toto statement verify --attestations
// reads.
const maxStatementBytes = 64 << 20

// statementBlob is one in-toto statement about a platform manifest.
type statementBlob struct {
	predicateType string
	data          []byte
	from          string // where it was found, for messages
}

// inIndexAttestations maps each platform manifest digest to the
// attestation manifests the index lists for it.
func inIndexAttestations(im *v1.IndexManifest) map[v1.Hash][]v1.Hash {
	out := map[v1.Hash][]v1.Hash{}
	for _, d := range im.Manifests {
		if !attestspec.IsAttestation(d) {
			continue
		}
		if sub, err := v1.NewHash(d.Annotations[attestspec.AnnotationReferenceDigest]); err == nil {
			out[sub] = append(out[sub], d.Digest)
		}
	}
	return out
}

// statementsOf reads the in-toto statement layers of the manifests imgs.
func statementsOf(imgs []v1.Image, from string) ([]statementBlob, error) {
	var out []statementBlob
	for _, img := range imgs {
		m, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		d, _ := img.Digest()
		for _, l := range m.Layers {
			if string(l.MediaType) != attestspec.MediaTypeInToto {
				continue
			}
			if l.Size > maxStatementBytes {
				return nil, fmt.Errorf("%s %s: statement %s is %d bytes", from, d, l.Digest, l.Size)
			}
			layer, err := img.LayerByDigest(l.Digest)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", from, d, err)
			}
			rc, err := layer.Compressed()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", from, d, err)
			}
			data, err := io.ReadAll(io.LimitReader(rc, maxStatementBytes))
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", from, d, err)
			}
			var st struct {
				PredicateType string `json:"predicateType"`
			}
			_ = json.Unmarshal(data, &st)
			out = append(out, statementBlob{predicateType: st.PredicateType, data: data, from: fmt.Sprintf("%s %s", from, d)})
		}
	}
	return out, nil
}

// attestCheck checks one platform image's statements: an SBOM and a
// provenance, both about this manifest; the SBOM's Go modules per binary
// equal the binary's build info; the provenance's base digests equal the
// manifest's base digest annotation.
//
// alone says the manifest was read by itself (a per-platform tag), not
// from an index: only its referrers could be asked.
func attestCheck(digest v1.Hash, annotations map[string]string, statements []statementBlob, bins, baseBins []elfFile, alone bool) []Check {
	f := findings{name: CheckAttest}
	var sbom *statementBlob
	for i, s := range statements {
		if s.predicateType == attestspec.PredicateSPDX {
			sbom = &statements[i]
			break
		}
	}
	prov := buildProvenance(statements)
	switch {
	case sbom == nil && prov == nil && alone:
		f.fail("no attestations: the registry's referrers hold no SBOM or provenance for " + digest.String() +
			"; attestations stored in the image index (--attest index) are not reachable from one platform's manifest: verify the index's tag")
	case sbom == nil && prov == nil:
		f.fail("no attestations: neither the index nor the registry's referrers hold an SBOM or provenance for " + digest.String())
		return f.done("")
	case sbom == nil:
		f.fail("no SBOM (in-toto " + attestspec.PredicateSPDX + ") for " + digest.String())
	case prov == nil:
		f.fail("no provenance (in-toto " + attestspec.PredicateSLSA + ") for " + digest.String())
	}
	for _, s := range []*statementBlob{sbom, prov} {
		if s != nil {
			if err := checkSubject(s.data, digest); err != nil {
				f.fail(fmt.Sprintf("%s (%s): %v", s.predicateType, s.from, err))
			}
		}
	}
	var base string
	if sbom != nil {
		checkSBOMModules(&f, sbom.data, bins)
		if base = checkSBOMBaseBinaries(&f, sbom.data, baseBins); base != "" {
			base = "; " + base
		}
	}
	if prov != nil {
		checkProvenanceBases(&f, prov.data, annotations[specsv1.AnnotationBaseImageDigest])
	}
	return f.done(fmt.Sprintf("SBOM and provenance about %s; Go modules and base digests agree with the image%s", digest, base))
}

// buildProvenance is the provenance checked against the image: the first
// of a build, else the first of a join (helperbuild index writes one about
// each image it joined, beside the build's it carries over, in an order
// that depends on where the source kept it); nil when there is none.
func buildProvenance(statements []statementBlob) *statementBlob {
	var prov *statementBlob
	for i, s := range statements {
		if s.predicateType != attestspec.PredicateSLSA {
			continue
		}
		if !attestspec.IsJoinProvenance(s.data) {
			return &statements[i]
		}
		if prov == nil {
			prov = &statements[i]
		}
	}
	return prov
}

// checkSubject fails unless the statement's subject is the manifest.
func checkSubject(data []byte, digest v1.Hash) error {
	if err := attestspec.CheckAbout(data, digest); err != nil {
		return fmt.Errorf("%w (this manifest)", err)
	}
	return nil
}

// spdxDoc is what the check reads of an SPDX 2.3 statement.
type spdxDoc struct {
	Predicate struct {
		Packages []struct {
			SPDXID, Name    string
			VersionInfo     string `json:"versionInfo"`
			PackageFileName string `json:"packageFileName"`
			Purpose         string `json:"primaryPackagePurpose"`
			Comment         string `json:"comment"`
		} `json:"packages"`
		Relationships []struct {
			From string `json:"spdxElementId"`
			Type string `json:"relationshipType"`
			To   string `json:"relatedSpdxElement"`
		} `json:"relationships"`
	} `json:"predicate"`
}

// checkSBOMModules compares, for each Go binary of the image's own
// layers, the modules the SBOM says it DEPENDS_ON with its build info.
func checkSBOMModules(f *findings, data []byte, bins []elfFile) {
	var doc spdxDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		f.fail("SBOM: not an SPDX document: " + err.Error())
		return
	}
	byID := map[string]string{} // SPDXID -> name@version
	app := map[string]string{}  // packageFileName -> SPDXID
	for _, p := range doc.Predicate.Packages {
		byID[p.SPDXID] = p.Name + "@" + p.VersionInfo
		if p.Purpose == "APPLICATION" && p.PackageFileName != "" {
			app[p.PackageFileName] = p.SPDXID
		}
	}
	for _, b := range bins {
		if !b.goBinary || b.modules == nil {
			continue
		}
		id, ok := app[b.path]
		if !ok {
			f.failAt(b.path, b.path+": Go binary missing from the SBOM")
			continue
		}
		var listed []string
		for _, r := range doc.Predicate.Relationships {
			if r.From == id && r.Type == "DEPENDS_ON" && !strings.HasPrefix(byID[r.To], "stdlib@") {
				listed = append(listed, byID[r.To])
			}
		}
		slices.Sort(listed)
		listed = slices.Compact(listed)
		if missing, extra := diff(b.modules, listed); len(missing)+len(extra) > 0 {
			f.failAt(b.path, fmt.Sprintf("%s: the SBOM's Go modules differ from the binary's build info: not in the SBOM [%s], not in the binary [%s]",
				b.path, strings.Join(missing, " "), strings.Join(extra, " ")))
		}
	}
}

// diff returns what want has and got lacks, and the reverse (both sorted).
func diff(want, got []string) (missing, extra []string) {
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

// goModules is the build info's modules as name@version, sorted: a module
// replaced by another module version is that version, one replaced by a
// directory keeps its path with no version (as the SBOM lists them).
func goModules(bi *buildinfo.BuildInfo) []string {
	out := []string{}
	for _, m := range bi.Deps {
		switch r := m.Replace; {
		case r == nil:
			out = append(out, m.Path+"@"+m.Version)
		case r.Version == "" || r.Version == "(devel)":
			out = append(out, m.Path+"@")
		default:
			out = append(out, r.Path+"@"+r.Version)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkProvenanceBases fails unless the provenance's base images
// (resolvedDependencies with a pkg:oci URI) are exactly the manifest's
// base digest annotation.
func checkProvenanceBases(f *findings, data []byte, baseDigest string) {
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				ResolvedDependencies []struct {
					URI    string            `json:"uri"`
					Digest map[string]string `json:"digest"`
				} `json:"resolvedDependencies"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		f.fail("provenance: not a SLSA v1 statement: " + err.Error())
		return
	}
	var bases []string
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		if strings.HasPrefix(d.URI, "pkg:oci/") {
			bases = append(bases, "sha256:"+d.Digest["sha256"])
		}
	}
	var want []string
	if baseDigest != "" {
		want = []string{baseDigest}
	}
	if !slices.Equal(bases, want) {
		f.fail(fmt.Sprintf("the provenance's base images [%s] are not the manifest's %s [%s]",
			strings.Join(bases, " "), specsv1.AnnotationBaseImageDigest, strings.Join(want, " ")))
	}
}

// attestationsFor gathers the statements about the manifest digest: from
// the attestation manifests idx lists for it, else from opts.Referrers.
func attestationsFor(ctx context.Context, idx v1.ImageIndex, inIndex map[v1.Hash][]v1.Hash, digest v1.Hash, opts Options) ([]statementBlob, error) {
	var imgs []v1.Image
	for _, d := range inIndex[digest] {
		img, err := idx.Image(d)
		if err != nil {
			return nil, fmt.Errorf("attestation manifest %s: %w", d, err)
		}
		imgs = append(imgs, img)
	}
	if len(imgs) > 0 {
		return statementsOf(imgs, "attestation manifest")
	}
	if opts.Referrers == nil {
		return nil, nil
	}
	refs, err := opts.Referrers(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", digest, err)
	}
	return statementsOf(refs, "referrer")
}
