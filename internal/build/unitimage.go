package build

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/dockerfile"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// assembleUnit applies one image's Dockerfile for one platform: one layer
// per COPY/ADD, then the manifest. On a base image, the Dockerfile sees the
// base's directories and every layer's entries go where BuildKit would put
// them on the base's filesystem (see rootfs.FS.Place).
func assembleUnit(ctx context.Context, plan *recipe.Plan, u unit, b *bases, flat *flatBases, binDir string, cache *layer.Cache, opts Options, lopts layer.Options) (img v1.Image, all []rootfs.Entry, fresh int, err error) {
	if platform.IsWindows(u.platform) {
		return assembleWindowsUnit(ctx, plan, u, b, binDir, cache, opts, lopts)
	}
	im := plan.Images[u.image]
	baseCfg, baseFS, err := readBase(ctx, im.Name, u, flat, opts)
	if err != nil {
		return nil, nil, 0, err
	}
	named := map[string]string{}
	for k, v := range im.Contexts {
		if v == recipe.BinariesContext {
			v = binDir
		}
		named[k] = v
	}
	dctx := dockerfile.Contexts{Main: plan.Dir, Named: named}
	if baseFS != nil {
		dctx.BaseHasDir = baseFS.HasDir
	}
	res, err := u.stage.Apply(baseCfg, dctx)
	if err != nil {
		return nil, nil, 0, err
	}
	steps := make([]manifest.Step, len(res.Steps))
	layers, written := 0, 0
	for _, s := range res.Steps {
		if s.Entries != nil {
			layers++
		}
	}
	// all: every entry the new layers hold, placed
	for k, s := range res.Steps {
		steps[k].History = s.History
		if s.Entries == nil {
			continue
		}
		entries := s.Entries
		if baseFS != nil {
			if entries, err = baseFS.Place(entries); err != nil {
				return nil, nil, 0, fmt.Errorf("layer for %q: %w", s.History.CreatedBy, err)
			}
		}
		written++
		opts.stage(im.Name, u.platform, progress.Writing, progress.Event{Count: written, Of: layers})
		start := time.Now()
		lopts.Epoch, lopts.Level = opts.Meta.Created, opts.CompressionLevel
		l, hit, err := cache.Write(ctx, entries, lopts)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("layer for %q: %w", s.History.CreatedBy, err)
		}
		d, _ := l.Digest()
		size, _ := l.Size()
		opts.Logger.Info("layer written", "image", im.Name, "platform", platform.Format(u.platform),
			"digest", d.String(), "size", size, "cached", hit, "duration", time.Since(start).Round(time.Millisecond))
		if !hit {
			fresh++
		}
		steps[k].Layer = l
		all = append(all, entries...)
	}
	var baseName string
	if a := b.get(u.baseRef); a != nil {
		baseName = pinnedName(a)
	}
	img, err = manifest.Image(manifest.Spec{
		Base:        u.base,
		Platform:    u.platform,
		Config:      res.Config,
		Steps:       steps,
		Annotations: opts.Meta.Annotations(baseName, u.baseDig),
		Created:     v1.Time{Time: opts.Meta.Created},
	})
	if err != nil {
		return nil, nil, 0, err
	}
	d, _ := img.Digest()
	opts.Logger.Info("image assembled", "image", im.Name, "platform", platform.Format(u.platform), "digest", d.String())
	return img, all, fresh, nil
}

// readBase is u's base config and flattened filesystem (zero and nil for
// scratch).
func readBase(ctx context.Context, name string, u unit, flat *flatBases, opts Options) (v1.Config, *rootfs.FS, error) {
	if u.base == nil {
		return v1.Config{}, nil, nil
	}
	cf, err := u.base.ConfigFile()
	if err != nil {
		return v1.Config{}, nil, fmt.Errorf("base config: %w", err)
	}
	start := time.Now()
	baseFS, err := flat.get(ctx, u.baseDig, u.base)
	if err != nil {
		return v1.Config{}, nil, err
	}
	opts.Logger.Debug("base filesystem read", "image", name, "platform", platform.Format(u.platform),
		"base", u.baseDig.String(), "duration", time.Since(start).Round(time.Millisecond))
	return *cf.Config.DeepCopy(), baseFS, nil
}

// indexImage builds the index of one image and its tag lists.
func indexImage(im recipe.Image, units []unit, images []v1.Image, attests []*product.Attestation, b *bases, opts Options) (*product.Image, error) {
	entries := make([]manifest.Entry, len(units))
	out := &product.Image{Name: im.Name, Tags: im.Tags, Contract: im.Contract}
	for j, u := range units {
		entries[j] = manifest.Entry{Platform: u.platform, Image: images[j]}
		d, err := images[j].Digest()
		if err != nil {
			return nil, err
		}
		size, err := images[j].Size()
		if err != nil {
			return nil, err
		}
		m, err := images[j].Manifest()
		if err != nil {
			return nil, err
		}
		out.Platforms = append(out.Platforms, product.Platform{
			Platform: u.platform, Digest: d, Size: size,
			CompressedSize: manifest.CompressedSize(m),
			Tags:           u.tags,
			Attestation:    attests[j],
		})
	}
	// The index names the base most platforms share: the Dockerfile's FROM.
	var baseName string
	var baseDigest v1.Hash
	if len(units) > 0 {
		if a := b.get(units[0].baseRef); a != nil {
			baseName, baseDigest = pinnedName(a), a.Digest
		}
	}
	out.BaseName = baseName
	return out.WithIndex(manifest.Index(entries, opts.Meta.Annotations(baseName, baseDigest), product.Attachments(out.Platforms)...))
}
