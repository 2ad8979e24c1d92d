package build

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/dockerfile"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// unit is one image for one platform: the smallest thing Build assembles.
type unit struct {
	image    int
	platform v1.Platform
	tags     []string // alias tags of this platform's manifest
	stage    *dockerfile.Stage
	baseRef  string // as written (after ARG expansion or override)
	base     v1.Image
	baseDig  v1.Hash // the platform's base manifest digest
}

// planUnits parses every Dockerfile, resolves every base once and returns
// the plan (with the platforms of a config-free package that its base
// decides) and the units in image order, then platform order. Every
// requested platform is checked against its base here, before anything is
// compiled.
func planUnits(ctx context.Context, plan *recipe.Plan, b *bases, opts Options) (*recipe.Plan, [][]unit, error) {
	files, err := parseDockerfiles(plan)
	if err != nil {
		return nil, nil, err
	}
	if plan, err = withBasePlatforms(ctx, plan, files, b, opts); err != nil {
		return nil, nil, err
	}
	units := make([][]unit, len(plan.Images))
	var refs []string
	for i, im := range plan.Images {
		for _, ip := range im.Platforms {
			var st *dockerfile.Stage
			ref := ip.Base
			if im.Windows == nil || !platform.IsWindows(ip.Platform) { // a recipe's Windows entry: its base is named, its Dockerfile not applied
				if st, err = files[i].Resolve(dockerfile.Target{Platform: ip.Platform, BuildPlatform: opts.BuildPlatform, Args: im.Args}); err != nil {
					return nil, nil, &InputError{err}
				}
				ref = cmp.Or(ip.Base, st.Base)
			}
			units[i] = append(units[i], unit{image: i, platform: ip.Platform, tags: ip.Tags, stage: st, baseRef: ref})
			if ref != "scratch" {
				refs = append(refs, ref)
			}
		}
	}
	if err := b.resolve(ctx, refs, opts.Jobs); err != nil {
		return nil, nil, err
	}
	if err := fetchBases(plan, units, b); err != nil {
		return nil, nil, err
	}
	return plan, units, nil
}

// parseDockerfiles parses the Dockerfile of every image of plan.
func parseDockerfiles(plan *recipe.Plan) ([]*dockerfile.File, error) {
	files := make([]*dockerfile.File, len(plan.Images))
	for i, im := range plan.Images {
		data := im.DockerfileData
		if data == nil {
			var err error
			if data, err = os.ReadFile(im.Dockerfile); err != nil {
				return nil, fmt.Errorf("image %s: %w", im.Name, err)
			}
		}
		name := im.DockerfileName
		if name == "" {
			name = im.Dockerfile
		}
		f, err := dockerfile.Parse(name, bytes.NewReader(data))
		if err != nil {
			return nil, &InputError{err}
		}
		files[i] = f
	}
	return files, nil
}

// platformsNamed reports whether plan names the platforms of every image,
// so withBasePlatforms returns it unchanged.
func platformsNamed(plan *recipe.Plan) bool {
	for _, im := range plan.Images {
		if len(im.Platforms) == 0 {
			return false
		}
	}
	return true
}

// withBasePlatforms returns plan, or, when its image has no platforms (a
// config-free package without --platforms), the plan for every platform
// the image's base offers that Go can build.
func withBasePlatforms(ctx context.Context, plan *recipe.Plan, files []*dockerfile.File, b *bases, opts Options) (*recipe.Plan, error) {
	for i, im := range plan.Images {
		if len(im.Platforms) > 0 {
			continue
		}
		st, err := files[i].Resolve(dockerfile.Target{Platform: opts.BuildPlatform, BuildPlatform: opts.BuildPlatform, Args: im.Args})
		if err != nil {
			return nil, &InputError{err}
		}
		if st.Base == "scratch" {
			return nil, &InputError{fmt.Errorf("image %s: a scratch base offers no platforms; give --platforms, e.g. --platforms linux/amd64,linux/arm64", im.Name)}
		}
		if err := b.resolve(ctx, []string{st.Base}, opts.Jobs); err != nil {
			return nil, err
		}
		offered, err := buildablePlatforms(b.get(st.Base))
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", im.Name, err)
		}
		return plan.ForBasePlatforms(offered)
	}
	return plan, nil
}

// missingPlatforms is one error per image and base that lacks platforms,
// naming every platform it lacks, joined; nil when no base lacks any.
func missingPlatforms(plan *recipe.Plan, missing [][]*imageref.MissingPlatformError) error {
	var out []error
	for i := range missing {
		var refs []string
		byRef := map[string][]v1.Platform{}
		offered := map[string][]v1.Platform{}
		for _, m := range missing[i] {
			if m == nil {
				continue
			}
			if _, ok := byRef[m.Ref]; !ok {
				refs = append(refs, m.Ref)
			}
			byRef[m.Ref], offered[m.Ref] = append(byRef[m.Ref], m.Platform), m.Offered
		}
		for _, ref := range refs {
			ps, p := platform.FormatList(byRef[ref]), platform.Format(byRef[ref][0])
			way := fmt.Sprintf("drop the platform, use a base that has it, or give %s a base of its own with base: {%s: REF}", p, p)
			if len(byRef[ref]) > 1 {
				way = fmt.Sprintf("drop those platforms, use a base that has them, or give each a base of its own with base: {%s: REF, ...}", p)
			}
			out = append(out, fmt.Errorf("image %s: base %s has no %s (it offers: %s): %s under the image in helperbuild.yaml",
				plan.Images[i].Name, ref, ps, platform.FormatList(offered[ref]), way))
		}
	}
	return errors.Join(out...)
}

// fetchBases reads each unit's base manifest and config. They are two
// round trips to the registry per platform before the first compile; they
// go out together. Every platform a base lacks is reported, one line per
// image and base naming them all (issue 25: a base lacking three platforms
// named one); otherwise the first failure in unit order.
func fetchBases(plan *recipe.Plan, units [][]unit, b *bases) error {
	errs := make([][]error, len(units))
	missing := make([][]*imageref.MissingPlatformError, len(units))
	var g errgroup.Group
	g.SetLimit(baseFetches)
	for i := range units {
		errs[i] = make([]error, len(units[i]))
		missing[i] = make([]*imageref.MissingPlatformError, len(units[i]))
		for j := range units[i] {
			u := &units[i][j]
			if u.baseRef == "scratch" {
				continue
			}
			g.Go(func() error {
				img, dig, err := b.get(u.baseRef).ImageFor(u.platform)
				switch {
				case errors.As(err, &missing[i][j]):
					return nil
				case err != nil:
					errs[i][j] = fmt.Errorf("image %s: %w", plan.Images[i].Name, err)
					return nil
				}
				u.base, u.baseDig = img, dig
				return nil
			})
		}
	}
	_ = g.Wait() // the errors are in errs and missing
	if err := missingWindows(plan, missing); err != nil {
		return err
	}
	if err := missingPlatforms(plan, missing); err != nil {
		return err
	}
	for i := range errs {
		for _, err := range errs[i] {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// baseFetches bounds the base manifest and config requests in flight.
const baseFetches = 8

// pinnedName is how a base appears in annotations and attestations: the
// registry reference as written, a layout's entry by its ref name or
// digest (never a host path: imageref.Artifact.Name).
func pinnedName(a *imageref.Artifact) string {
	if a == nil {
		return ""
	}
	return a.Name()
}

// missingWindows is the usage error for the first Windows entry whose
// base lacks its build (or is no Windows base): the base's own message,
// which names what it offers and what a Windows entry needs.
func missingWindows(plan *recipe.Plan, missing [][]*imageref.MissingPlatformError) error {
	for i := range missing {
		for _, m := range missing[i] {
			if m != nil && platform.IsWindows(m.Platform) {
				return &InputError{fmt.Errorf("image %s: %w", plan.Images[i].Name, m)}
			}
		}
	}
	return nil
}
