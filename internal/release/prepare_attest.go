package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// prepareAttest turns the request's attestation settings, its CI job and
// the release metadata into AttestOptions, failing before anything
// compiles; cfg is the recipe read (nil in config-free mode).
func (p *Prepared) prepareAttest(cfg *recipe.Config) error {
	a := p.Attest
	mode, err := ParseAttestMode(a.Mode)
	if err != nil {
		return &InputError{err}
	}
	prov, err := attest.ParseProvenanceMode(a.Provenance)
	if err != nil {
		return inputf("--provenance %q: want min or max", a.Provenance)
	}
	if mode == AttestNone {
		if a.Dir != "" {
			return inputf("--attest-dir %s with --attest none: there is nothing to write; drop one of them", a.Dir)
		}
		p.AttestOptions = Attest{Mode: mode}
		return nil
	}
	if mode == AttestReferrers && !p.Push {
		return inputf("--attest referrers: an OCI layout or archive holds no referrers; use --attest index (or push to a registry)")
	}
	if p.Meta.Revision != "" && !fullCommit.MatchString(p.Meta.Revision) {
		return inputf("revision %q: the provenance names the source by its full commit id; pass --revision \"$(git rev-parse HEAD)\" (or --attest none)", p.Meta.Revision)
	}
	if a.Dir != "" {
		if err := os.MkdirAll(a.Dir, 0o755); err != nil {
			return inputf("--attest-dir %s: %v", a.Dir, outfile.Reason(err))
		}
	}
	ci := p.CI
	p.AttestOptions = Attest{
		Mode:               mode,
		Provenance:         prov,
		Source:             ci.attestSource(p.Meta.Source, p.Meta.Revision),
		CI:                 ci.attest(),
		HelperbuildVersion: p.HelperbuildVersion,
	}
	if cfg != nil {
		rec, err := recipeOf(ci.ProjectDir, first(p.Config, "helperbuild.yaml"))
		if err != nil {
			return err
		}
		p.AttestOptions.Recipe = rec
	}
	if p.ByDigest && mode == AttestReferrers {
		// A job writes no tag, and the fallback tags are written with the
		// release's; merge carries the index's entries.
		return inputf("--attest referrers with --by-digest: a job writes no tag, so no referrers fallback tag either; use --attest index (merge carries the attestation entries into the index)")
	}
	return nil
}

// recipeOf is the recipe file's path relative to the source root (root,
// else the working directory; its name alone when it lies outside) and its
// digest.
func recipeOf(root, path string) (attest.Recipe, error) {
	named, err := part.RecipeAt(path)
	if err != nil {
		return attest.Recipe{}, inputf("recipe %s: %v", path, outfile.Reason(err))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return attest.Recipe{}, err
	}
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return attest.Recipe{}, err
		}
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = filepath.Base(abs)
	}
	return attest.Recipe{Path: filepath.ToSlash(rel), Digest: named.Digest}, nil
}
