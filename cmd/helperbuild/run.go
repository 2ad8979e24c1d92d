package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/gitmeta"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/release"
)

// runBuild is build and push: gather inputs, plan, build, publish, report.
func runBuild(cmd *cobra.Command, env Env, f *buildFlags, pkg string, push bool) error {
	ctx := cmd.Context()
	log := logger(cmd.ErrOrStderr())
	if f.jobs <= 0 {
		return usagef("--jobs must be at least 1, got %d", f.jobs)
	}
	if err := f.retry.validate(); err != nil {
		return err
	}
	platforms, _, err := parsePlatforms(f.platforms)
	if err != nil {
		return err
	}
	if pkg != "" && (f.config != "" || len(f.images) > 0) {
		return usagef("a PACKAGE argument and --config/--image are two different modes; use one")
	}
	if pkg == "" && f.base != "" {
		return usagef("--base is for config-free mode: give the Go main package too, e.g. helperbuild %s --base %s ./cmd/app", cmd.Name(), f.base)
	}

	// Where the module and the recipe are.
	dir, err := absDir(".")
	if err != nil {
		return err
	}
	var cfg *recipe.Config
	if pkg == "" {
		path := f.config
		if path == "" {
			path = "helperbuild.yaml"
			if _, err := os.Stat(path); err != nil {
				return usagef("no helperbuild.yaml in %s: give a Go main package (e.g. %s --base scratch --platforms linux/amd64 ./cmd/app) or --config FILE", dir, cmd.Name())
			}
		}
		if cfg, err = recipe.Load(path); err != nil {
			return usageError{err}
		}
		dir = cfg.Dir
	}

	// Release metadata: flags, then GitLab CI, then git.
	git := gitmeta.Read(ctx, dir)
	epoch, err := epochOf(env, git)
	if err != nil {
		return usageError{err}
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

	// The destination is checked before anything is compiled.
	dest, err := parseDestination(f, env, pkg, push)
	if err != nil {
		return err
	}
	if f.metadataFile != "" {
		if err := checkMetadataPath(f.metadataFile); err != nil {
			return err
		}
	}

	var plan *recipe.Plan
	if cfg != nil {
		if plan, err = cfg.Plan(vars, recipe.Selection{Images: f.images, Platforms: platforms}); err != nil {
			if vars.Version == "" {
				// An empty version is the usual reason a template renders wrong.
				return usagef("%v (the version is empty: %s is not a git checkout with a commit and CI_COMMIT_TAG is not set; pass --version, e.g. --version v1.2.3)", err, dir)
			}
			return usageError{err}
		}
	} else {
		if f.base == "" {
			return usagef("config-free mode needs --base: a registry reference, oci:DIR, oci-archive:FILE or scratch")
		}
		ldflags, err := recipe.Render("--ldflags", f.ldflags, vars)
		if err != nil {
			return usageError{err}
		}
		if plan, err = release.PackagePlan(release.Package{
			Dir: dir, Main: pkg, BinaryName: f.binaryName, Base: f.base,
			Platforms: platforms, Ldflags: ldflags, Tags: dest.layoutTags(),
		}); err != nil {
			return usageError{err}
		}
		if _, err := os.Stat(filepath.Join(dir, pkg)); err != nil {
			return usagef("package %s: no such directory in %s", pkg, dir)
		}
	}

	tmp, err := os.MkdirTemp("", "helperbuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	imgOpts, rt, err := withRetries(imageref.Options{
		Keychain:  keychain(env),
		Insecure:  f.insecure,
		TempDir:   tmp,
		UserAgent: "helperbuild/" + version,
	}, f.retry, log)
	if err != nil {
		return err
	}
	defer reportRetries(log, rt)
	// Credentials are checked before anything is compiled.
	if push {
		for _, repo := range dest.repositories(plan) {
			if err := publish.CheckPush(ctx, repo, imgOpts.Keychain, imgOpts.HTTPTransport()); err != nil {
				return err
			}
		}
	}
	// When pushing, each platform's blobs go up as soon as it is assembled.
	var onImage func(context.Context, string, v1.Platform, v1.Image) error
	if push {
		if dest.uploader, err = publish.NewUploader(dest.registryOptions(ctx, imgOpts, log)); err != nil {
			return err
		}
		onImage = func(_ context.Context, image string, _ v1.Platform, img v1.Image) error {
			// The run's context, not the assembly's: the uploader's
			// connections outlive the build and serve the tag phase.
			for _, repo := range dest.repositoriesOf(plan, image) {
				if err := dest.uploader.Image(ctx, repo, img); err != nil {
					return err
				}
			}
			return nil
		}
	}
	res, err := release.Build(ctx, plan, release.Options{
		Env:      env,
		Jobs:     f.jobs,
		Meta:     meta,
		Images:   imgOpts,
		TempDir:  tmp,
		CacheDir: cacheDir(env, f),
		OnImage:  onImage,
		Logger:   log,
	})
	if err != nil {
		return err
	}
	if err := dest.publish(ctx, res, imgOpts, epoch, tmp, log); err != nil {
		return err
	}
	if err := printResult(cmd.OutOrStdout(), res, dest); err != nil {
		return err
	}
	if f.metadataFile != "" {
		if err := writeMetadata(f.metadataFile, res, dest); err != nil {
			return fmt.Errorf("metadata file: %w", err)
		}
	}
	return nil
}

// cacheDir is --cache-dir, else $XDG_CACHE_HOME/helperbuild, else
// ~/.cache/helperbuild; "" (no cache) with --no-cache or no home.
func cacheDir(env Env, f *buildFlags) string {
	switch {
	case f.noCache:
		return ""
	case f.cacheDir != "":
		return f.cacheDir
	case env.Get("XDG_CACHE_HOME") != "":
		return filepath.Join(env.Get("XDG_CACHE_HOME"), "helperbuild")
	case env.Get("HOME") != "":
		return filepath.Join(env.Get("HOME"), ".cache", "helperbuild")
	}
	return ""
}

// epochOf is SOURCE_DATE_EPOCH, else CI_COMMIT_TIMESTAMP, else the HEAD commit time, else 0.
func epochOf(env Env, git gitmeta.Info) (time.Time, error) {
	for _, key := range []string{"SOURCE_DATE_EPOCH", "CI_COMMIT_TIMESTAMP"} {
		if v := env.Get(key); v != "" {
			t, err := gitmeta.ParseEpoch(v)
			if err != nil {
				return time.Time{}, fmt.Errorf("%s: %w", key, err)
			}
			return t, nil
		}
	}
	if !git.CommitTime.IsZero() {
		return git.CommitTime, nil
	}
	return time.Unix(0, 0).UTC(), nil
}
