package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/gitmeta"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// runBuild is build and push: gather inputs, plan, build, publish, report.
func runBuild(cmd *cobra.Command, env Env, f *buildFlags, pkg string, push bool) error {
	ctx := cmd.Context()
	log := logger(cmd.ErrOrStderr())
	if f.jobs <= 0 {
		return usagef("--jobs must be at least 1, got %d", f.jobs)
	}
	if f.level < 1 || f.level > 9 {
		return usagef("--compression-level %d: want 1 (fastest) to 9 (smallest)", f.level)
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

	cfg, dir, err := loadRecipe(cmd, f, pkg)
	if err != nil {
		return err
	}
	vars, meta, err := releaseMeta(ctx, env, f, dir)
	if err != nil {
		return err
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
	plan, err := makePlan(cfg, f, pkg, dir, vars, platforms, dest)
	if err != nil {
		return err
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
	ro := release.Options{
		Env:              env,
		Jobs:             f.jobs,
		CompressionLevel: f.level,
		Meta:             meta,
		Images:           imgOpts,
		TempDir:          tmp,
		CacheDir:         cacheDir(env, f),
		Logger:           log,
	}
	if err := dest.prepare(ctx, plan, imgOpts, log, &ro); err != nil {
		return err
	}
	res, err := release.Build(ctx, plan, ro)
	var failed *verify.FailedError
	if errors.As(err, &failed) {
		// The findings as verify prints them; the error line says what failed.
		if werr := verify.WriteTable(cmd.ErrOrStderr(), failed.Name, failed.Report); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if err := dest.publish(ctx, res, imgOpts, meta.Created, tmp, log); err != nil {
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
