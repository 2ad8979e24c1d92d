package release

import (
	"bytes"
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
	stage    *dockerfile.Stage
	baseRef  string // as written (after ARG expansion or override)
	base     v1.Image
	baseDig  v1.Hash // the platform's base manifest digest
}

// planUnits parses every Dockerfile, resolves every base once and returns
// the units in image order, then platform order. Every requested platform
// is checked against its base here, before anything is compiled.
func planUnits(ctx context.Context, plan *recipe.Plan, b *bases, opts Options) ([][]unit, error) {
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

	// Images without platforms take every platform their base offers.
	platforms := make([][]v1.Platform, len(plan.Images))
	for i, im := range plan.Images {
		platforms[i] = im.Platforms
		if len(platforms[i]) > 0 {
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
		if platforms[i], err = buildablePlatforms(b.get(st.Base)); err != nil {
			return nil, fmt.Errorf("image %s: %w", im.Name, err)
		}
	}

	units := make([][]unit, len(plan.Images))
	var refs []string
	for i, im := range plan.Images {
		for _, p := range platforms[i] {
			st, err := files[i].Resolve(dockerfile.Target{Platform: p, BuildPlatform: opts.BuildPlatform, Args: im.Args})
			if err != nil {
				return nil, &InputError{err}
			}
			ref := st.Base
			if o, ok := im.Base[platform.Format(p)]; ok {
				ref = o
			}
			units[i] = append(units[i], unit{image: i, platform: p, stage: st, baseRef: ref})
			if ref != "scratch" {
				refs = append(refs, ref)
			}
		}
	}
	if err := b.resolve(ctx, refs, opts.Jobs); err != nil {
		return nil, err
	}
	// Each platform's manifest and config are two round trips to the
	// registry before the first compile; they go out together, and the
	// first failure in unit order is the one reported.
	errs := make([][]error, len(units))
	var g errgroup.Group
	g.SetLimit(baseFetches)
	for i := range units {
		errs[i] = make([]error, len(units[i]))
		for j := range units[i] {
			u := &units[i][j]
			if u.baseRef == "scratch" {
				continue
			}
			g.Go(func() error {
				img, dig, err := b.get(u.baseRef).ImageFor(u.platform)
				var missing *imageref.MissingPlatformError
				switch {
				case errors.As(err, &missing):
					p := platform.Format(u.platform)
					errs[i][j] = fmt.Errorf("image %s: base %s has no %s (it offers: %s): drop the platform, use a base that has it, or give %s a base of its own with base: {%s: REF} under the image in helperbuild.yaml",
						plan.Images[i].Name, missing.Ref, p, platform.FormatList(missing.Offered), p, p)
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
	_ = g.Wait() // the errors are in errs
	for i := range errs {
		for _, err := range errs[i] {
			if err != nil {
				return nil, err
			}
		}
	}
	return units, nil
}

// baseFetches bounds the base manifest and config requests in flight.
const baseFetches = 8

// pinnedName is how a base appears in annotations: the reference as written.
func pinnedName(a *imageref.Artifact) string {
	if a == nil {
		return ""
	}
	return a.Ref.String()
}
