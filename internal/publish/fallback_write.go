package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// fallbackAttempts bounds the writes of one fallback tag that another
// writer's may undo.
const fallbackAttempts = 5

// withReferrers is list plus the descriptors of add it lacks, sorted by
// digest (as go-containerregistry and regclient keep a referrers index).
func withReferrers(list, add []v1.Descriptor) []v1.Descriptor {
	out := slices.Clone(list)
	for _, d := range add {
		if !slices.ContainsFunc(out, func(o v1.Descriptor) bool { return o.Digest == d.Digest }) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b v1.Descriptor) int { return strings.Compare(a.Digest.String(), b.Digest.String()) })
	return out
}

// writeFallback writes f's referrers to its fallback tag without losing
// another writer's: the tag is a read-modify-write that the registry cannot
// make conditional, so right before each write the tag is read again and
// f's referrers added to what it lists, and after it the tag is read back;
// when another writer's PUT replaced it with an index that lacks some of
// f's referrers, that is done again (at most fallbackAttempts times). It
// returns how many referrers the tag lists. A registry that serves
// something else than the index written is refused.
func (p *publisher) writeFallback(ctx context.Context, f fallbackTag) (int, error) {
	for attempt := 1; ; attempt++ {
		current, err := p.readFallback(ctx, f)
		if err != nil {
			return 0, err
		}
		im := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: withReferrers(current, f.add)}
		write, err := json.Marshal(im)
		if err != nil {
			return 0, err
		}
		if err := p.raw.putManifest(ctx, f.repo, f.tag, types.OCIImageIndex, write); err != nil {
			return 0, err
		}
		raw, _, found, err := p.raw.getManifest(ctx, f.repo, f.tag)
		if err != nil {
			return 0, err
		}
		if found && bytes.Equal(raw, write) {
			return len(im.Manifests), nil
		}
		served, err := p.readFallback(ctx, f)
		if err != nil || !found {
			return 0, fmt.Errorf("registry %s does not serve the referrers index written as %s; publish the attestations in the image index with --attest index", f.repo.RegistryStr(), f.tag)
		}
		if len(withReferrers(served, f.add)) == len(served) {
			return len(served), nil // another writer's index, which lists all of ours
		}
		if attempt == fallbackAttempts {
			return 0, fmt.Errorf("%s:%s: other writers replaced the referrers index %d times; run again", f.repo, f.tag, attempt)
		}
		p.log.Info("referrers tag replaced by another writer: adding ours again", "tag", f.repo.Tag(f.tag).String(), "attempt", attempt)
	}
}

// readFallback returns what f's tag lists now: nothing when it is absent,
// an error when it is not a referrers index or resolves to the subject.
func (p *publisher) readFallback(ctx context.Context, f fallbackTag) ([]v1.Descriptor, error) {
	raw, mt, found, err := p.raw.getManifest(ctx, f.repo, f.tag)
	if err != nil {
		return nil, fmt.Errorf("read %s:%s: %w", f.repo, f.tag, imageref.Explain(err))
	}
	if !found {
		return nil, nil
	}
	if err := resolvesToSubject(f.repo, f.tag, f.subject, raw); err != nil {
		return nil, err
	}
	if mt != types.OCIImageIndex {
		return nil, fmt.Errorf("%s:%s is a %s, not a referrers index: the tag is taken; remove it or use --attest index", f.repo, f.tag, mt)
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s:%s: %w", f.repo, f.tag, err)
	}
	return im.Manifests, nil
}
