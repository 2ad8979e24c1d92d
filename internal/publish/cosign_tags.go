package publish

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/helperbuild/helperbuild/internal/registry"
)

// copyCosignTags puts each image's CosignTags in its repository by digest,
// each merged with what the repository holds under its tag now: that
// image, with the layers (signatures, attestations) it lacks appended, so
// that copying into a repository that has signatures of its own loses
// none. A tag that already holds every layer is left as it is. It returns
// the tags to write in the tag phase, and keeps every merged image by full
// tag reference (p.cosignBase), so that signing (signLegacy) adds to a copy
// rather than beside it.
func (p *publisher) copyCosignTags(ctx context.Context, images []Image, repos []name.Repository) ([]legacyTag, error) {
	var out []legacyTag
	p.cosignBase = map[string]v1.Image{}
	for i, img := range images {
		for _, ct := range img.CosignTags {
			tag := repos[i].Tag(ct.Tag)
			merged, changed, err := p.mergeCosignTag(ctx, tag, ct.Image)
			if err != nil {
				return nil, err
			}
			p.cosignBase[tag.String()] = merged
			if !changed {
				p.log.Info("cosign tag in place", "tag", tag.String())
				continue
			}
			d, err := merged.Digest()
			if err != nil {
				return nil, err
			}
			if err := uploadBlobs(ctx, p.reg, repos[i], merged); err != nil {
				return nil, err
			}
			if err := p.reg.Put(ctx, repos[i].Digest(d.String()), merged); err != nil {
				return nil, fmt.Errorf("push %s@%s: %w", repos[i], d, registry.Explain(err))
			}
			out = append(out, legacyTag{repo: repos[i], tag: ct.Tag, image: merged})
		}
	}
	return out, nil
}

// mergeCosignTag is from on top of what tag holds now (from itself when
// nothing): changed is false when tag holds every layer of from already.
func (p *publisher) mergeCosignTag(ctx context.Context, tag name.Tag, from v1.Image) (v1.Image, bool, error) {
	current, err := p.reg.Image(ctx, tag)
	var terr *transport.Error
	switch {
	case errors.As(err, &terr) && terr.StatusCode == 404:
		return from, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("read %s: %w", tag, registry.Explain(err))
	}
	have := map[v1.Hash]bool{}
	cm, err := current.Manifest()
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", tag, err)
	}
	for _, l := range cm.Layers {
		have[l.Digest] = true
	}
	m, err := from.Manifest()
	if err != nil {
		return nil, false, err
	}
	merged := current
	for _, l := range m.Layers {
		if have[l.Digest] {
			continue
		}
		layer, err := from.LayerByDigest(l.Digest)
		if err != nil {
			return nil, false, err
		}
		if merged, err = mutate.Append(merged, mutate.Addendum{Layer: layer, Annotations: l.Annotations, MediaType: l.MediaType}); err != nil {
			return nil, false, fmt.Errorf("%s: %w", tag, err)
		}
		have[l.Digest] = true
	}
	if merged == current {
		return current, false, nil
	}
	return merged, true, nil
}

// withoutSigned drops the copies whose tag signing wrote again (its image
// holds the copy's layers: signLegacy started from it).
func withoutSigned(copied, signed []legacyTag) []legacyTag {
	var out []legacyTag
	for _, c := range copied {
		again := false
		for _, s := range signed {
			again = again || (s.repo.String() == c.repo.String() && s.tag == c.tag)
		}
		if !again {
			out = append(out, c)
		}
	}
	return out
}
