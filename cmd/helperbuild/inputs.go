package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/gitmeta"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// loadRecipe reads helperbuild.yaml (or --config) in recipe mode and returns
// the module root: the recipe's directory, or the current one.
func loadRecipe(cmd *cobra.Command, f *buildFlags, pkg string) (*recipe.Config, string, error) {
	dir, err := absDir(".")
	if err != nil {
		return nil, "", err
	}
	if pkg != "" {
		return nil, dir, nil // checkModeFlags refused --config
	}
	path := f.config
	if path == "" {
		path = "helperbuild.yaml"
		if _, err := os.Stat(path); err != nil {
			return nil, "", usagef("no helperbuild.yaml in %s: give a Go main package (e.g. %s --base scratch --platforms linux/amd64 ./cmd/app) or --config FILE", dir, cmd.Name())
		}
	}
	cfg, err := recipe.Load(path)
	if err != nil {
		return nil, "", usageError{err}
	}
	return cfg, cfg.Dir, nil
}

// releaseMeta gathers version, revision, branch, source and the epoch:
// flags first, then GitLab CI's variables, then git, asked only for what
// neither gave.
func releaseMeta(ctx context.Context, env Env, f *buildFlags, dir string) (recipe.Vars, manifest.Meta, error) {
	var want gitmeta.Field
	for field, given := range map[gitmeta.Field]string{
		gitmeta.Version:    first(f.version, env.Get("CI_COMMIT_TAG")),
		gitmeta.Revision:   first(f.revision, env.Get("CI_COMMIT_SHA")),
		gitmeta.Branch:     first(f.branch, env.Get("CI_COMMIT_REF_NAME")),
		gitmeta.Remote:     first(f.source, env.Get("CI_PROJECT_URL")),
		gitmeta.CommitTime: first(env.Get("SOURCE_DATE_EPOCH"), env.Get("CI_COMMIT_TIMESTAMP")),
	} {
		if given == "" {
			want |= field
		}
	}
	git := gitmeta.Read(ctx, dir, want)
	epoch, err := epochOf(env, git)
	if err != nil {
		return recipe.Vars{}, manifest.Meta{}, usageError{err}
	}
	vars := recipe.Vars{
		Version:  first(f.version, env.Get("CI_COMMIT_TAG"), git.Version),
		Revision: first(f.revision, env.Get("CI_COMMIT_SHA"), git.Revision),
		Branch:   first(f.branch, env.Get("CI_COMMIT_REF_NAME"), git.Branch),
		Date:     epoch.Format(time.RFC3339),
		Env:      env.Map(),
	}
	meta := manifest.Meta{
		Created:  epoch,
		Source:   first(f.source, env.Get("CI_PROJECT_URL"), git.Remote),
		Revision: vars.Revision,
		Version:  vars.Version,
	}
	return vars, meta, nil
}

// makePlan renders the recipe, or turns config-free mode into a plan.
func makePlan(cfg *recipe.Config, f *buildFlags, pkg, dir string, vars recipe.Vars, platforms []v1.Platform, dest *destination) (*recipe.Plan, error) {
	if cfg != nil {
		plan, err := cfg.Plan(vars, recipe.Selection{Images: f.images, Platforms: platforms, Tags: f.tags, Partial: f.byDigest})
		if err != nil {
			if vars.Version == "" {
				// An empty version is the usual reason a template renders wrong.
				return nil, usagef("%v (the version is empty: %s is not a git checkout with a commit and CI_COMMIT_TAG is not set; pass --version, e.g. --version v1.2.3)", err, dir)
			}
			return nil, usageError{err}
		}
		return plan, nil
	}
	if f.base == "" {
		return nil, usagef("config-free mode needs --base: a registry reference, oci:DIR, oci-archive:FILE or scratch")
	}
	ldflags, err := recipe.Render("--ldflags", f.ldflags, vars)
	if err != nil {
		return nil, usageError{err}
	}
	plan, err := recipe.PackagePlan(recipe.Package{
		Dir: dir, Main: pkg, BinaryName: f.binaryName, Base: f.base,
		Platforms: platforms, Ldflags: ldflags, Tags: dest.layoutTags(),
	})
	if err != nil {
		return nil, usageError{err}
	}
	if _, err := os.Stat(filepath.Join(dir, pkg)); err != nil {
		return nil, usagef("package %s: no such directory in %s", pkg, dir)
	}
	return plan, nil
}
