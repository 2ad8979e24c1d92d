package release

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/gitmeta"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// prepareAttest turns the request's attestation settings, its CI job and
// the release metadata into AttestOptions, failing before anything
// compiles; cfg is the recipe read (nil in config-free mode), dir the
// directory git was asked about and git its answers (releaseMeta asks for
// CI.attestGit too when attestations are on). When later is not zero,
// git has not been asked what the attestations name of the checkout:
// AttestOptions.Complete asks it, beside the compiles.
func (p *Prepared) prepareAttest(cfg *recipe.Config, dir string, git gitmeta.Info, later gitmeta.Field) error {
	a := p.Attest
	mode, err := product.ParseAttestMode(a.Mode)
	if err != nil {
		return &InputError{err}
	}
	prov, err := attest.ParseProvenanceMode(a.Provenance)
	if err != nil {
		return inputf("--provenance %q: want min or max", a.Provenance)
	}
	if mode == product.AttestNone {
		if a.Dir != "" {
			return inputf("--attest-dir %s with --attest none: there is nothing to write; drop one of them", a.Dir)
		}
		p.AttestOptions = build.Attest{Mode: mode}
		return nil
	}
	if mode == product.AttestReferrers && !p.Push {
		return inputf("--attest referrers: an OCI layout or archive holds no referrers; use --attest index (or push to a registry)")
	}
	if p.Meta.Revision != "" && !fullCommit.MatchString(p.Meta.Revision) {
		return inputf("revision %q: the provenance names the source by its full commit id; pass --revision \"$(git rev-parse HEAD)\" (or --attest none)", p.Meta.Revision)
	}
	if p.ByDigest && mode == product.AttestReferrers {
		// A job writes no tag, and the fallback tags are written with the
		// release's; merge carries the index's entries.
		return inputf("--attest referrers with --by-digest: a job writes no tag, so no referrers fallback tag either; use --attest index (merge carries the attestation entries into the index)")
	}
	if a.Dir != "" {
		if err := os.MkdirAll(a.Dir, 0o755); err != nil {
			return inputf("--attest-dir %s: %v", a.Dir, outfile.Reason(err))
		}
	}
	p.AttestOptions = build.Attest{
		Mode:               mode,
		Provenance:         prov,
		CI:                 p.CI.attest(),
		HelperbuildVersion: p.HelperbuildVersion,
	}
	if later == 0 {
		return p.fillCheckout(&p.AttestOptions, cfg, dir, git)
	}
	p.AttestOptions.Complete = func(ctx context.Context, ba *build.Attest) error {
		return p.fillCheckout(ba, cfg, dir, gitmeta.Read(ctx, dir, later))
	}
	return nil
}

// fillCheckout fills in a's source, and its recipe or package, from git's
// answers about the checkout in dir (cfg: the recipe read, nil in
// config-free mode).
func (p *Prepared) fillCheckout(a *build.Attest, cfg *recipe.Config, dir string, git gitmeta.Info) error {
	ci := p.CI
	root := cmp.Or(git.Toplevel, ci.ProjectDir)
	a.Source = attest.Source{URL: cmp.Or(p.Meta.Source, git.RemoteURI), Ref: ci.sourceRef(p.Meta, git), Commit: p.Meta.Revision}
	if cfg != nil {
		rec, err := recipeOf(root, cmp.Or(p.Config, "helperbuild.yaml"))
		if err != nil {
			return err
		}
		a.Recipe = rec
		return nil
	}
	a.Package = &attest.Package{Path: underRoot(root, filepath.Join(dir, p.Package.Main)),
		BinaryName: p.Package.BinaryName, LDFlags: p.Package.Ldflags}
	return nil
}

// attestGit is what the attestations ask git: the source root, and what
// names the source that g and the job do not: the ref (see sourceRef: a
// job's tag or branch variable names it) and the remote (--source).
func (c CI) attestGit(g Given) gitmeta.Field {
	want := gitmeta.Toplevel
	if c.CommitTag == "" && c.CommitBranch == "" {
		want |= gitmeta.Tags | gitmeta.Revision | gitmeta.Branch
	}
	if g.Source == "" {
		want |= gitmeta.Remote
	}
	return want
}

// sourceRef is the git ref built: from GitLab CI's variables the tag, else
// the branch; outside CI a tag at HEAD (the version's, if it is one), else
// the branch checked out; "" when none is known (the commit still names
// the source). Git's answers count only when its HEAD is the revision
// built.
func (c CI) sourceRef(meta manifest.Meta, git gitmeta.Info) string {
	switch {
	case c.CommitTag != "":
		return "refs/tags/" + c.CommitTag
	case c.CommitBranch != "":
		return "refs/heads/" + c.CommitBranch
	case git.Revision == "" || git.Revision != meta.Revision:
	case slices.Contains(git.Tags, meta.Version):
		return "refs/tags/" + meta.Version
	case len(git.Tags) > 0:
		return "refs/tags/" + git.Tags[0]
	case git.Branch != "":
		return "refs/heads/" + git.Branch
	}
	return ""
}

// recipeOf is the recipe file's path relative to the source root (root:
// git's work tree root, else CI_PROJECT_DIR, else the working directory)
// and its digest.
func recipeOf(root, path string) (attest.Recipe, error) {
	named, err := part.RecipeAt(path)
	if err != nil {
		return attest.Recipe{}, inputf("recipe %s: %v", path, outfile.Reason(err))
	}
	return attest.Recipe{Path: underRoot(root, path), Digest: named.Digest}, nil
}

// underRoot is path relative to root ("" is the working directory), in
// slashes ("examples/gitlab-runner/helperbuild.yaml"), symlinks resolved
// on both sides (git reports the real root); its base name alone when it
// lies outside root.
func underRoot(root, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Base(path)
	}
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return filepath.Base(abs)
		}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Base(abs)
	}
	return filepath.ToSlash(rel)
}
