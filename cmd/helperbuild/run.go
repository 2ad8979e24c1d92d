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
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// buildRun is a build or push with every input gathered and checked:
// whatever can fail before anything compiles has failed by the time one
// exists.
type buildRun struct {
	env          Env
	plan         *recipe.Plan
	dest         *destination
	meta         manifest.Meta
	images       imageref.Options // TempDir and retries are set per run
	retry        retryFlags
	jobs, level  int
	cacheDir     string
	metadataFile string
	dotenvFile   string
	progress     progressFlags
	command      string // "helperbuild push", for the start line
	attest       release.Attest
	attestDir    string
}

// buildExec runs a prepared build or push; tests swap it to look at what
// the flags turned into.
type buildExec func(r *buildRun, cmd *cobra.Command) error

// prepareBuild turns flags, environment and recipe into a buildRun.
func prepareBuild(cmd *cobra.Command, env Env, f *buildFlags, pkg string, push bool) (*buildRun, error) {
	if f.jobs <= 0 {
		return nil, usagef("--jobs must be at least 1, got %d", f.jobs)
	}
	if f.level < 1 || f.level > 9 {
		return nil, usagef("--compression-level %d: want 1 (fastest) to 9 (smallest)", f.level)
	}
	if err := f.retry.validate(); err != nil {
		return nil, err
	}
	if err := f.progress.validate(); err != nil {
		return nil, err
	}
	platforms, all, err := parsePlatforms(f.platforms)
	if err != nil {
		return nil, err
	}
	rel, err := parseReleasePlatforms(f)
	if err != nil {
		return nil, err
	}
	if all && pkg != "" && f.base == "scratch" {
		return nil, usagef("--platforms all means every platform the base offers, and scratch offers none; list them, e.g. --platforms linux/amd64,linux/arm64")
	}
	if err := checkModeFlags(cmd, pkg); err != nil {
		return nil, err
	}
	cfg, dir, err := loadRecipe(cmd, f, pkg)
	if err != nil {
		return nil, err
	}
	vars, meta, err := releaseMeta(cmd.Context(), env, f, dir)
	if err != nil {
		return nil, err
	}
	// The destination is checked before anything is compiled.
	dest, err := parseDestination(f, env, pkg, push)
	if err != nil {
		return nil, err
	}
	if f.metadataFile != "" {
		if err := checkOutputFile("--metadata-file", f.metadataFile); err != nil {
			return nil, err
		}
	}
	recipePath := ""
	if cfg != nil {
		recipePath = first(f.config, "helperbuild.yaml")
	}
	at, err := f.attest.options(env, meta, recipePath, !push)
	if err != nil {
		return nil, err
	}
	if f.byDigest && at.Mode == release.AttestReferrers {
		// A job writes no tag, and the fallback tags are written with the
		// release's; merge carries the index's entries.
		return nil, usagef("--attest referrers with --by-digest: a job writes no tag, so no referrers fallback tag either; use --attest index (merge carries the attestation entries into the index)")
	}
	cache, err := prepareCacheDir(env, f)
	if err != nil {
		return nil, err
	}
	plan, err := makePlan(cfg, f, pkg, dir, vars, platforms, dest)
	if err != nil {
		return nil, err
	}
	if f.dotenv != "" {
		if err := checkDotenv(f.dotenv, plan); err != nil {
			return nil, err
		}
	}
	if f.byDigest {
		var whole *recipe.Plan
		if rel, whole, err = wholeRelease(f, rel, cfg, vars, plan, platforms); err != nil {
			return nil, err
		}
		if err := dest.setPart(env, cfg, whole, plan, meta, rel); err != nil {
			return nil, err
		}
		// The provenance names the whole release, as the single push of
		// its platforms would: merge then writes that push's index.
		if whole != nil {
			for _, im := range whole.Images {
				at.Images = append(at.Images, im.Name)
			}
			at.Platforms = recipe.Values(whole.Platforms)
		} else {
			at.Platforms = rel // nil: the base's, as built
		}
	}
	return &buildRun{
		env: env, plan: plan, dest: dest, meta: meta,
		images:       imageref.Options{Keychain: keychain(env), Insecure: f.insecure, UserAgent: "helperbuild/" + version},
		retry:        f.retry,
		jobs:         f.jobs,
		level:        f.level,
		cacheDir:     cache,
		metadataFile: f.metadataFile,
		dotenvFile:   f.dotenv,
		progress:     f.progress,
		command:      cmd.CommandPath(),
		attest:       at,
		attestDir:    f.attest.dir,
	}, nil
}

// execute builds, publishes and reports.
func (r *buildRun) execute(cmd *cobra.Command) error {
	prog := openProgress(r.progress, cmd.ErrOrStderr(), r.env)
	prog.start(r.command, r.plan, r.dest.String())
	res, dest, err := r.buildAndPublish(cmd, prog)
	prog.close(err) // the final state, before anything else is printed
	var failed *verify.FailedError
	if errors.As(err, &failed) {
		// The findings as verify prints them; the error line says what failed.
		if werr := verify.WriteTable(cmd.ErrOrStderr(), failed.Name, failed.Report); werr != nil {
			return werr
		}
	}
	if err != nil {
		var terr *publish.TagError
		if !errors.As(err, &terr) {
			err = nothingTagged{err} // tags come last: none was written
		}
		return err
	}
	return report(cmd, res, dest, outputFiles{metadata: r.metadataFile, dotenv: r.dotenvFile, attestDir: r.attestDir})
}

// buildAndPublish builds, then publishes; tags are written last. It
// returns where the images went, for the report.
func (r *buildRun) buildAndPublish(cmd *cobra.Command, prog *runProgress) (*release.Result, publish.Destination, error) {
	ctx := cmd.Context()
	log := prog.log
	tmp, err := os.MkdirTemp("", "helperbuild-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)

	opts := r.images
	opts.TempDir = tmp
	// Every base blob is fetched once per run, however many platforms,
	// images and checks read it.
	opts.Blobs = imageref.NewBlobs(filepath.Join(tmp, "blobs"))
	imgOpts, rt, err := registry.WithRetries(opts, r.retry.retries(), prog.retry)
	if err != nil {
		return nil, nil, err
	}
	defer registry.ReportRetries(log, rt)
	ro := release.Options{
		Env:              r.env,
		Jobs:             r.jobs,
		CompressionLevel: r.level,
		Meta:             r.meta,
		Images:           imgOpts,
		TempDir:          tmp,
		CacheDir:         r.cacheDir,
		Attest:           r.attest,
		Logger:           log,
		Progress:         prog.rep,
	}
	dest, err := r.dest.open(ctx, r.plan, imgOpts, tmp, r.meta.Created, log)
	if err != nil {
		return nil, nil, err
	}
	hooks := dest.Hooks(ctx)
	ro.Preflight, ro.OnImage, ro.OnLayer = hooks.Preflight, hooks.OnImage, hooks.OnLayer
	res, err := release.Build(ctx, r.plan, ro)
	if err != nil {
		return nil, nil, err
	}
	var images []publish.Image
	for _, img := range res.Images {
		images = append(images, img.Publish())
	}
	prog.phase(progress.KindPhaseStart, "publish", r.dest.publishHeader())
	if err := dest.Publish(ctx, images); err != nil {
		return nil, nil, err
	}
	prog.phase(progress.KindPhaseEnd, "publish", publishOutcome(res))
	return res, dest, nil
}

// outputFiles are the files a release writes besides its summary; ""
// is a file not asked for.
type outputFiles struct {
	metadata, dotenv string
	attestDir        string // --attest-dir
}

// report prints res's summary on stdout and writes its files: build, push
// and merge report alike.
func report(cmd *cobra.Command, res *release.Result, dest publish.Destination, files outputFiles) error {
	if err := printResult(cmd.OutOrStdout(), res, dest); err != nil {
		return err
	}
	if files.attestDir != "" {
		if err := writeAttestDir(files.attestDir, res); err != nil {
			return err
		}
	}
	if files.metadata != "" {
		if err := writeMetadata(files.metadata, res, dest); err != nil {
			return fmt.Errorf("metadata file: %w", err)
		}
	}
	if files.dotenv != "" {
		if err := writeDotenv(files.dotenv, res, dest); err != nil {
			return err
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

// prepareCacheDir creates the cache directory now, so one that cannot be
// created fails before anything compiles.
func prepareCacheDir(env Env, f *buildFlags) (string, error) {
	dir := cacheDir(env, f)
	if dir == "" {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		from := "--cache-dir " + dir
		if f.cacheDir == "" {
			from = "the cache directory " + dir + " (from XDG_CACHE_HOME or HOME)"
		}
		return "", usagef("%s: %v; give another with --cache-dir DIR, or --no-cache", from, reason(err))
	}
	return dir, nil
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
