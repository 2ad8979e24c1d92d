package release

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/gitmeta"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// Prepared is a Request with every input gathered and checked: whatever can
// fail before anything compiles has failed by the time one exists, but for
// what the attestations ask git when every name was given
// (AttestOptions.Complete): that fails in the build's resolve phase, still
// before anything of the compiles shows.
type Prepared struct {
	Request
	// Plan is what the run builds; Meta the release metadata (Created is
	// the epoch); AttestOptions what the attestations say.
	Plan          *recipe.Plan
	Meta          manifest.Meta
	AttestOptions build.Attest
	// Dest is where the images go.
	Dest *Destination
	// signing signs the release at a registry (Request.Sign); signer
	// keeps the bundles it made, for --attest-dir.
	signing publish.Signing
	signer  *Signer

	Observer // set by Execute
}

// Prepare checks req and plans it: the recipe (or package), the release
// metadata, the destination, the attestations, the cache directory and
// every output file, before anything compiles.
func Prepare(ctx context.Context, req Request) (*Prepared, error) {
	req.defaults()
	if err := req.Registry.Check(); err != nil {
		return nil, err
	}
	cfg, dir, err := req.loadRecipe()
	if err != nil {
		return nil, err
	}
	if req.Package.Main != "" {
		if err := req.Package.resolve(dir); err != nil {
			return nil, err
		}
	}
	vars, meta, git, later, err := req.releaseMeta(ctx, dir)
	if err != nil {
		return nil, err
	}
	// The destination is checked before anything is compiled.
	dest, err := req.parseDestination()
	if err != nil {
		return nil, err
	}
	if err := checkOutputFile("--metadata-file", req.Outputs.Metadata); err != nil {
		return nil, err
	}
	p := &Prepared{Request: req, Meta: meta, Dest: dest}
	if req.Sign != nil && req.ByDigest {
		return nil, inputf("--sign with --by-digest: a job writes no tag, so nothing is signed there; sign in the merge job (helperbuild merge --sign)")
	}
	if p.signing, p.signer, err = req.Sign.signing(req.Registry); err != nil {
		return nil, err
	}
	if err := p.prepareAttest(cfg, dir, git, later); err != nil {
		return nil, err
	}
	if err := p.prepareCacheDir(); err != nil {
		return nil, err
	}
	if p.Plan, err = p.makePlan(cfg, dir, vars); err != nil {
		return nil, err
	}
	if err := checkWindowsPlan(p.Plan, cfg == nil, req.Package.Base); err != nil {
		return nil, err
	}
	if err := checkDotenvPlan(req.Outputs.Dotenv, p.Plan, p.signer); err != nil {
		return nil, err
	}
	if req.ByDigest {
		if err := p.preparePart(cfg, vars); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (r *Request) defaults() {
	if r.Jobs <= 0 {
		r.Jobs = 1
	}
}

// checkOutputFile fails when the file flag names ("" is none) could not
// be written.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := outfile.Check(flag+" "+path, path); err != nil {
		return &InputError{err}
	}
	return nil
}

// loadRecipe reads helperbuild.yaml (or Config) in recipe mode and returns
// the module root: the recipe's directory, or the current one.
func (r *Request) loadRecipe() (*recipe.Config, string, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return nil, "", err
	}
	if r.Package.Main != "" {
		return nil, dir, nil // the command refused --config
	}
	path := r.Config
	if path == "" {
		path = "helperbuild.yaml"
		if _, err := os.Stat(path); err != nil {
			return nil, "", inputf("no helperbuild.yaml in %s: give a Go main package (e.g. %s --base scratch --platforms linux/amd64 ./cmd/app) or --config FILE", dir, r.verb())
		}
	}
	cfg, err := recipe.Load(path)
	if err != nil {
		return nil, "", &InputError{err}
	}
	return cfg, cfg.Dir, nil
}

// verb is the command's name: build or push.
func (r *Request) verb() string {
	if r.Push {
		return "push"
	}
	return "build"
}

// releaseMeta gathers version, revision, branch, source and the epoch: as
// given, then git, asked only for what was not given. With attestations
// on, what they name of the checkout (see CI.attestGit) is asked in the
// same round of git commands when there is one, and returned in git;
// when every name was given there is none, and later is what the
// attestations still want of git, asked beside the compiles (see
// prepareAttest): the start waits for no git command.
func (r *Request) releaseMeta(ctx context.Context, dir string) (vars recipe.Vars, meta manifest.Meta, git gitmeta.Info, later gitmeta.Field, err error) {
	g := r.Given
	var want gitmeta.Field
	for field, given := range map[gitmeta.Field]string{
		gitmeta.Version: g.Version, gitmeta.Revision: g.Revision, gitmeta.Branch: g.Branch,
		gitmeta.Remote: g.Source, gitmeta.CommitTime: g.Epoch,
	} {
		if given == "" {
			want |= field
		}
	}
	if mode, err := product.ParseAttestMode(r.Attest.Mode); err == nil && mode != product.AttestNone {
		if want == 0 {
			later = r.CI.attestGit(g)
		} else {
			want |= r.CI.attestGit(g)
		}
	}
	if want != 0 {
		git = gitmeta.Read(ctx, dir, want)
	}
	epoch, err := epochOf(g, git)
	if err != nil {
		return recipe.Vars{}, manifest.Meta{}, git, 0, &InputError{err}
	}
	vars = recipe.Vars{
		Version:  cmp.Or(g.Version, git.Version),
		Revision: cmp.Or(g.Revision, git.Revision),
		Branch:   cmp.Or(g.Branch, git.Branch),
		Date:     epoch.Format(time.RFC3339),
		Env:      envMap(r.Env),
	}
	meta = manifest.Meta{Created: epoch, Source: cmp.Or(g.Source, git.Remote), Revision: vars.Revision, Version: vars.Version}
	return vars, meta, git, later, nil
}

// epochOf is the given epoch, else the HEAD commit time, else 0.
func epochOf(g Given, git gitmeta.Info) (time.Time, error) {
	if g.Epoch != "" {
		t, err := gitmeta.ParseEpoch(g.Epoch)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: %w", g.EpochFrom, err)
		}
		return t, nil
	}
	if !git.CommitTime.IsZero() {
		return git.CommitTime, nil
	}
	return time.Unix(0, 0).UTC(), nil
}

// makePlan renders the recipe, or turns config-free mode into a plan.
func (p *Prepared) makePlan(cfg *recipe.Config, dir string, vars recipe.Vars) (*recipe.Plan, error) {
	if cfg != nil {
		plan, err := cfg.Plan(vars, recipe.Selection{Images: p.Images, Platforms: p.Platforms, Tags: p.Tags, Partial: p.ByDigest})
		if err != nil {
			if vars.Version == "" {
				// An empty version is the usual reason a template renders wrong.
				return nil, inputf("%v (the version is empty: %s is not a git checkout with a commit and CI_COMMIT_TAG is not set; pass --version, e.g. --version v1.2.3)", err, dir)
			}
			return nil, &InputError{err}
		}
		return plan, nil
	}
	pkg := p.Package
	if err := pkg.checkPlatforms(p.Platforms != nil, p.AllPlatforms); err != nil {
		return nil, err
	}
	ldflags, err := recipe.Render("--ldflags", pkg.Ldflags, vars)
	if err != nil {
		return nil, &InputError{err}
	}
	plan, err := recipe.PackagePlan(recipe.Package{
		Dir: dir, Main: pkg.Main, BinaryName: pkg.BinaryName, Base: pkg.Base,
		Platforms: p.Platforms, Ldflags: ldflags, Tags: p.Dest.names,
	})
	if err != nil {
		return nil, &InputError{err}
	}
	return plan, nil
}

// prepareCacheDir creates the cache directory now, so one that cannot be
// created fails before anything compiles.
func (p *Prepared) prepareCacheDir() error {
	if p.CacheDir == "" {
		return nil
	}
	if err := os.MkdirAll(p.CacheDir, 0o755); err != nil {
		return inputf("%s: %v; give another with --cache-dir DIR, or --no-cache", p.CacheDirFrom, outfile.Reason(err))
	}
	return nil
}

// envMap is env as a map, later entries winning (for {{.Env.NAME}}).
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// ImageNames lists the images of the recipe at config (helperbuild.yaml
// when ""), in the recipe's order: what --image completes to.
func ImageNames(config string) ([]string, error) {
	r := &Request{Config: config}
	cfg, _, err := r.loadRecipe()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, im := range cfg.Images {
		names = append(names, im.Name)
	}
	return names, nil
}
