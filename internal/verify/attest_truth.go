package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
)

// provenanceSource is what truthCheck reads of a provenance.
type provenanceSource struct {
	Predicate struct {
		BuildDefinition struct {
			ExternalParameters struct {
				Recipe *struct {
					Path   string            `json:"path"`
					Digest map[string]string `json:"digest"`
				} `json:"recipe"`
				Package *struct {
					Base string `json:"base"`
				} `json:"package"`
			} `json:"externalParameters"`
			ResolvedDependencies []struct {
				URI    string            `json:"uri"`
				Name   string            `json:"name"`
				Digest map[string]string `json:"digest"`
			} `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
	} `json:"predicate"`
}

// ErrNoCommit is what Options.SourceFile returns (wrapped) when the
// checkout does not have the commit: the recipe cannot be looked up there,
// which is no failure of the image.
var ErrNoCommit = errors.New("commit not in the checkout")

// truthCheck checks that one platform image's attestations name what
// another machine can find (part of CheckAttest): no base is named by a host path (in the image's
// org.opencontainers.image.base.name, the provenance, the SBOM), and the
// provenance's recipe is in the source commit with its digest, when
// sourceFile can read that commit. Without statements it adds nothing:
// attestCheck already failed.
func truthCheck(ctx context.Context, annotations map[string]string, statements []statementBlob, sourceFile func(context.Context, string, string) ([]byte, error)) []Check {
	f := findings{name: CheckAttest}
	var prov, sbom []byte
	if p := buildProvenance(statements); p != nil {
		prov = p.data
	}
	for _, s := range statements {
		if s.predicateType == attestspec.PredicateSPDX && sbom == nil {
			sbom = s.data
		}
	}
	if prov == nil && sbom == nil {
		return nil
	}
	names := map[string]string{specsv1.AnnotationBaseImageName + " annotation": annotations[specsv1.AnnotationBaseImageName]}
	var p provenanceSource
	if prov != nil {
		if err := json.Unmarshal(prov, &p); err != nil {
			f.fail("provenance: not a SLSA v1 statement: " + err.Error())
			return f.done("")
		}
		for _, d := range p.Predicate.BuildDefinition.ResolvedDependencies {
			names["provenance dependency "+d.URI] = d.Name
		}
		if pk := p.Predicate.BuildDefinition.ExternalParameters.Package; pk != nil {
			names["provenance package base"] = pk.Base
		}
	}
	if sbom != nil {
		for _, n := range sbomBaseNames(sbom) {
			names["SBOM base package"] = n
		}
	}
	for where, n := range names {
		if hostPath(n) {
			f.fail(fmt.Sprintf("the %s names the base %q, a path on the build host: rebuild with this helperbuild (a layout's base is named by its ref name or digest)", where, n))
		}
	}
	summary := "no host paths"
	if prov != nil {
		summary += "; " + checkRecipeInCommit(ctx, &f, p, sourceFile)
	}
	return f.done(summary)
}

// hostPath reports whether a base name is a layout or archive reference
// by path, or a path.
func hostPath(n string) bool {
	return strings.HasPrefix(n, "oci:") || strings.HasPrefix(n, "oci-archive:") || strings.HasPrefix(n, "/")
}

// sbomBaseNames are the names of the SBOM's packages the image is a
// DESCENDANT_OF.
func sbomBaseNames(data []byte) []string {
	var doc spdxDoc
	if json.Unmarshal(data, &doc) != nil {
		return nil // checkSBOMModules reports it
	}
	byID := map[string]string{}
	for _, p := range doc.Predicate.Packages {
		byID[p.SPDXID] = p.Name
	}
	var out []string
	for _, r := range doc.Predicate.Relationships {
		if r.Type == "DESCENDANT_OF" {
			out = append(out, byID[r.To])
		}
	}
	return out
}

// checkRecipeInCommit fails unless the provenance's recipe is at its path
// in the source commit with its digest; it returns what it found for the
// summary.
func checkRecipeInCommit(ctx context.Context, f *findings, p provenanceSource, sourceFile func(context.Context, string, string) ([]byte, error)) string {
	bd := p.Predicate.BuildDefinition
	rec := bd.ExternalParameters.Recipe
	if rec == nil {
		return "no recipe (config-free)"
	}
	var commit string
	for _, d := range bd.ResolvedDependencies {
		if c := d.Digest["gitCommit"]; c != "" {
			commit = c
		}
	}
	switch {
	case commit == "":
		return fmt.Sprintf("recipe %s not looked up: the provenance names no commit", rec.Path)
	case sourceFile == nil:
		return fmt.Sprintf("recipe %s not looked up: no checkout given", rec.Path)
	}
	data, err := sourceFile(ctx, commit, rec.Path)
	if errors.Is(err, ErrNoCommit) {
		return fmt.Sprintf("recipe %s not looked up: commit %.12s is not in this checkout", rec.Path, commit)
	}
	if err != nil {
		f.fail(fmt.Sprintf("the provenance's recipe %s is not in commit %s: %v", rec.Path, commit, err))
		return ""
	}
	h, _, _ := v1.SHA256(strings.NewReader(string(data)))
	if want := rec.Digest["sha256"]; want != h.Hex {
		f.fail(fmt.Sprintf("the provenance's recipe %s has sha256 %s, but in commit %s it is %s", rec.Path, want, commit, h.Hex))
		return ""
	}
	return fmt.Sprintf("recipe %s found in commit %.12s with its digest", rec.Path, commit)
}
