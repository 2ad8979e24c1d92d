package main

import (
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// checkByDigest reads push's --by-digest and --part-file: one goes with
// the other, and the part file must be writable before anything compiles.
func checkByDigest(f *buildFlags, push bool) error {
	switch {
	case !push:
		return nil
	case f.byDigest && f.partFile == "":
		return usagef("push --by-digest writes a part file for merge: give --part-file FILE, e.g. --part-file parts/$CI_JOB_ID.json")
	case !f.byDigest && f.partFile != "":
		return usagef("--part-file %s is written by push --by-digest only; add --by-digest (no tag, a part for merge), or drop --part-file", f.partFile)
	case !f.byDigest && f.relPlatforms != "":
		return usagef("--release-platforms names the whole release of a push --by-digest job; add --by-digest, or drop it (a push releases its --platforms)")
	case f.byDigest && f.dotenv != "":
		return usagef("--dotenv %s with --by-digest: a job tags nothing, so there is no reference to report; give --dotenv to helperbuild merge", f.dotenv)
	case f.byDigest:
		return checkOutputFile("--part-file", f.partFile)
	}
	return nil
}

// parseReleasePlatforms reads --release-platforms; nil when not given.
func parseReleasePlatforms(f *buildFlags) ([]v1.Platform, error) {
	if strings.TrimSpace(f.relPlatforms) == "" {
		return nil, nil
	}
	ps, all, err := parsePlatforms(f.relPlatforms)
	if err != nil {
		return nil, usagef("--release-platforms: %v", err)
	}
	if all {
		return nil, usagef("--release-platforms all: list the release's platforms in the index's order, e.g. --release-platforms linux/amd64,linux/arm64")
	}
	return ps, nil
}

// wholeRelease is what a push --by-digest job knows of the release it is
// a share of: its platforms in index order, rel from --release-platforms
// (default: the recipe's; config-free, --platforms, nil when the base
// decides), and with a recipe, the plan a single push of them would run.
// Every platform the job builds must be one of them.
func wholeRelease(f *buildFlags, rel []v1.Platform, cfg *recipe.Config, vars recipe.Vars, plan *recipe.Plan, platforms []v1.Platform) ([]v1.Platform, *recipe.Plan, error) {
	if rel != nil {
		job := platforms
		if cfg != nil {
			job = recipe.Values(plan.Platforms)
		} else if job == nil {
			return nil, nil, usagef("--release-platforms with a config-free push --by-digest: give --platforms too, the platforms of this job")
		}
		for _, p := range job {
			if platform.Index(rel, p) < 0 {
				return nil, nil, usagef("--release-platforms %s lacks %s, which this job builds; the release's list names every job's platforms", f.relPlatforms, platform.Format(p))
			}
		}
	}
	if cfg == nil {
		if rel == nil {
			rel = platforms
		}
		return rel, nil, nil
	}
	whole, err := cfg.Plan(vars, recipe.Selection{Images: f.images, Platforms: rel, Tags: f.tags})
	if err != nil {
		return nil, nil, usageError{err}
	}
	if rel == nil {
		rel = cfg.Platforms
	}
	return rel, whole, nil
}

// setPart fills the release's fields of the part file a push --by-digest
// writes: what merge checks the parts agree on, and the platform list of
// the whole release, rel (nil: config-free, the base's once the build
// resolves them); whole is the recipe's plan of the release.
func (d *destination) setPart(env Env, cfg *recipe.Config, whole, plan *recipe.Plan, meta manifest.Meta, rel []v1.Platform) error {
	d.part = part.File{Version: meta.Version, Revision: meta.Revision, Created: meta.Created.UTC(), Helperbuild: version}
	if id, name, url := env.Get("CI_JOB_ID"), env.Get("CI_JOB_NAME"), env.Get("CI_JOB_URL"); id != "" || name != "" || url != "" {
		d.part.Job = &part.Job{ID: id, Name: name, URL: url}
	}
	d.contracts = map[string]string{}
	for _, img := range plan.Images {
		d.contracts[img.Name] = img.Contract
	}
	d.part.Platforms = platform.FormatAll(rel)
	if cfg == nil {
		return nil
	}
	var err error
	if d.part.Recipe, err = part.RecipeAt(cfg.Path); err != nil {
		return err
	}
	for _, img := range cfg.Images {
		if len(img.Platforms) == 0 {
			continue
		}
		if d.imagePlatforms == nil {
			d.imagePlatforms = map[string][]string{}
		}
		// Its own platforms, those of the release when it names a subset.
		d.imagePlatforms[img.Name] = platform.FormatAll(img.Platforms)
		for _, wi := range whole.Images {
			if wi.Name == img.Name {
				d.imagePlatforms[img.Name] = platform.FormatAll(recipe.Values(wi.Platforms))
			}
		}
	}
	return nil
}
