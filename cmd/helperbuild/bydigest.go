package main

import (
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
	case f.byDigest:
		return checkOutputFile("--part-file", f.partFile)
	}
	return nil
}

// setPart fills the release's fields of the part file a push --by-digest
// writes: what merge checks the parts agree on, and the platform list of
// the whole release (the recipe's, whatever --platforms this job built;
// config-free, this push's, or the base's when the build resolves them).
func (d *destination) setPart(env Env, cfg *recipe.Config, plan *recipe.Plan, meta manifest.Meta, platforms []v1.Platform) error {
	d.part = part.File{Version: meta.Version, Revision: meta.Revision, Created: meta.Created.UTC()}
	if id, name, url := env.Get("CI_JOB_ID"), env.Get("CI_JOB_NAME"), env.Get("CI_JOB_URL"); id != "" || name != "" || url != "" {
		d.part.Job = &part.Job{ID: id, Name: name, URL: url}
	}
	d.contracts = map[string]string{}
	for _, img := range plan.Images {
		d.contracts[img.Name] = img.Contract
	}
	if cfg == nil {
		d.part.Platforms = formatAll(platforms) // nil: the base's, once read
		return nil
	}
	var err error
	if d.part.Recipe, err = part.RecipeAt(cfg.Path); err != nil {
		return err
	}
	d.part.Platforms = formatAll(cfg.Platforms)
	for _, img := range cfg.Images {
		if len(img.Platforms) > 0 {
			if d.imagePlatforms == nil {
				d.imagePlatforms = map[string][]string{}
			}
			d.imagePlatforms[img.Name] = formatAll(img.Platforms)
		}
	}
	return nil
}

// formatAll formats every platform of ps.
func formatAll(ps []v1.Platform) []string {
	var out []string
	for _, p := range ps {
		out = append(out, platform.Format(p))
	}
	return out
}
