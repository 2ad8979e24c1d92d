package release

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// preparePart fills what a push --by-digest job knows of the release it is
// a share of: the part file's release fields and the provenance's images
// and platforms, which name the whole release as the single push of its
// platforms would (merge then writes that push's index).
func (p *Prepared) preparePart(cfg *recipe.Config, vars recipe.Vars) error {
	rel, whole, err := p.wholeRelease(cfg, vars)
	if err != nil {
		return err
	}
	if err := p.setPart(cfg, whole, rel); err != nil {
		return err
	}
	if whole != nil {
		for _, im := range whole.Images {
			p.AttestOptions.Images = append(p.AttestOptions.Images, im.Name)
		}
		p.AttestOptions.Platforms = recipe.Values(whole.Platforms)
	} else {
		p.AttestOptions.Platforms = rel // nil: the base's, as built
	}
	return nil
}

// wholeRelease is the release's platforms in index order, from
// --release-platforms (default: the recipe's; config-free, --platforms,
// nil when the base decides), and with a recipe, the plan a single push of
// them would run. Every platform the job builds must be one of them.
func (p *Prepared) wholeRelease(cfg *recipe.Config, vars recipe.Vars) ([]v1.Platform, *recipe.Plan, error) {
	rel := p.ReleasePlatforms
	if rel != nil {
		job := p.Platforms
		if cfg != nil {
			job = recipe.Values(p.Plan.Platforms)
		} else if job == nil {
			return nil, nil, inputf("--release-platforms with a config-free push --by-digest: give --platforms too, the platforms of this job")
		}
		for _, pl := range job {
			if platform.Index(rel, pl) < 0 {
				return nil, nil, inputf("--release-platforms %s lacks %s, which this job builds; the release's list names every job's platforms", platform.FormatList(rel), platform.Format(pl))
			}
		}
	}
	if cfg == nil {
		if rel == nil {
			rel = p.Platforms
		}
		return rel, nil, nil
	}
	whole, err := cfg.Plan(vars, recipe.Selection{Images: p.Images, Platforms: rel, Tags: p.Tags})
	if err != nil {
		return nil, nil, &InputError{err}
	}
	if rel == nil {
		rel = cfg.Platforms
	}
	return rel, whole, nil
}

// setPart fills the release's fields of the part file: what merge checks
// the parts agree on, and the platform list of the whole release, rel
// (nil: config-free, the base's once the build resolves them); whole is
// the recipe's plan of the release.
func (p *Prepared) setPart(cfg *recipe.Config, whole *recipe.Plan, rel []v1.Platform) error {
	d, meta := p.Dest, p.Meta
	d.Part = part.File{Version: meta.Version, Revision: meta.Revision, Created: meta.Created.UTC(), Helperbuild: p.HelperbuildVersion}
	if ci := p.CI; ci.JobID != "" || ci.JobName != "" || ci.JobURL != "" {
		d.Part.Job = &part.Job{ID: ci.JobID, Name: ci.JobName, URL: ci.JobURL}
	}
	d.contracts = map[string]string{}
	for _, img := range p.Plan.Images {
		d.contracts[img.Name] = img.Contract
	}
	d.Part.Platforms = platform.FormatAll(rel)
	if cfg == nil {
		return nil
	}
	var err error
	if d.Part.Recipe, err = part.RecipeAt(cfg.Path); err != nil {
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
