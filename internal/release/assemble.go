package release

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/dockerfile"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// assembleUnit applies one image's Dockerfile for one platform: one layer
// per COPY/ADD, then the manifest.
func assembleUnit(ctx context.Context, plan *recipe.Plan, u unit, b *bases, binDir, blobDir string, opts Options) (v1.Image, error) {
	im := plan.Images[u.image]
	var baseCfg v1.Config
	if u.base != nil {
		cf, err := u.base.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("base config: %w", err)
		}
		baseCfg = *cf.Config.DeepCopy()
	}
	named := map[string]string{}
	for k, v := range im.Contexts {
		if v == recipe.BinariesContext {
			v = binDir
		}
		named[k] = v
	}
	res, err := u.stage.Apply(baseCfg, dockerfile.Contexts{Main: plan.Dir, Named: named})
	if err != nil {
		return nil, err
	}
	steps := make([]manifest.Step, len(res.Steps))
	for k, s := range res.Steps {
		steps[k].History = s.History
		if s.Entries == nil {
			continue
		}
		l, err := layer.Write(ctx, s.Entries, layer.Options{Dir: blobDir, Epoch: opts.Meta.Created})
		if err != nil {
			return nil, fmt.Errorf("layer for %q: %w", s.History.CreatedBy, err)
		}
		steps[k].Layer = l
	}
	var baseName string
	if a := b.get(u.baseRef); a != nil {
		baseName = pinnedName(a)
	}
	img, err := manifest.Image(manifest.Spec{
		Base:        u.base,
		Platform:    u.platform,
		Config:      res.Config,
		Steps:       steps,
		Annotations: opts.Meta.Annotations(baseName, u.baseDig),
		Created:     v1.Time{Time: opts.Meta.Created},
	})
	if err != nil {
		return nil, err
	}
	d, _ := img.Digest()
	opts.Logger.Info("image assembled", "image", im.Name, "platform", platform.Format(u.platform), "digest", d.String())
	return img, nil
}

// indexImage builds the index of one image and its tag lists.
func indexImage(im recipe.Image, units []unit, images []v1.Image, b *bases, opts Options) (*Image, error) {
	entries := make([]manifest.Entry, len(units))
	out := &Image{Name: im.Name, Tags: im.Tags, Contract: im.Contract}
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
		out.Platforms = append(out.Platforms, Platform{
			Platform: u.platform, Digest: d, Size: size,
			Tags: im.PlatformTags[platform.Format(u.platform)],
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
	idx, err := manifest.Index(entries, opts.Meta.Annotations(baseName, baseDigest))
	if err != nil {
		return nil, err
	}
	out.Index = idx
	if out.Digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	return out, nil
}
