package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/registry"
)

// fallbackAttempts bounds the writes of one fallback tag that another
// writer's may undo, and the rounds of confirmFallbacks.
const fallbackAttempts = 5

// settleFor is how long the fallback tags are left alone before they are
// read again (see confirmFallbacks), given the longest write of one
// (read, PUT, read back) took took: another writer takes about as long
// between reading a tag and writing it, so ten times that, at least a
// quarter of a second (a loaded machine's scheduling) and at most 5s.
func settleFor(took time.Duration) time.Duration {
	return min(max(10*took, 250*time.Millisecond), 5*time.Second)
}

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
		if err := p.reg.PutManifest(ctx, f.repo, f.tag, types.OCIImageIndex, write); err != nil {
			return 0, err
		}
		raw, _, found, err := p.reg.GetManifest(ctx, f.repo, f.tag)
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

// confirmFallbacks reads every fallback tag again once they have been left
// alone for settle, and writes again each one that lacks some of its
// referrers (at most fallbackAttempts rounds). writeFallback's read-back
// sees another writer's PUT that lands before it; this sees one that lands
// later: a writer that read the tag before ours was written and wrote its
// own index after our read-back, which erased ours without either of them
// seeing it. Both writers check, so whichever lost re-adds on top of the
// other's. A writer stalled longer than settle between its read and its
// write can still erase ours: the registry API has no conditional PUT.
// On failure it returns the tag it failed on.
func (p *publisher) confirmFallbacks(ctx context.Context, fallbacks []fallbackTag, settle time.Duration) (string, error) {
	if len(fallbacks) == 0 {
		return "", nil
	}
	pending := fallbacks
	for round := 1; len(pending) > 0; round++ {
		tag := pending[0].repo.Tag(pending[0].tag).String()
		if round > fallbackAttempts {
			return tag, fmt.Errorf("%s: other writers replaced the referrers index %d times; run again", tag, fallbackAttempts)
		}
		if err := p.sleep(ctx, settle); err != nil {
			return tag, err
		}
		var lost []fallbackTag
		for _, f := range pending {
			tag = f.repo.Tag(f.tag).String()
			current, err := p.readFallback(ctx, f)
			if err != nil {
				return tag, err
			}
			if len(withReferrers(current, f.add)) == len(current) {
				continue
			}
			p.log.Info("referrers tag replaced by another writer after ours: adding ours again", "tag", tag, "round", round)
			if _, err := p.writeFallback(ctx, f); err != nil {
				return tag, err
			}
			lost = append(lost, f)
		}
		pending = lost
	}
	return "", nil
}

// sleepContext waits d, or until ctx is done (its cause then).
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// readFallback returns what f's tag lists now: nothing when it is absent,
// an error when it is not a referrers index or resolves to the subject.
func (p *publisher) readFallback(ctx context.Context, f fallbackTag) ([]v1.Descriptor, error) {
	raw, mt, found, err := p.reg.GetManifest(ctx, f.repo, f.tag)
	if err != nil {
		return nil, fmt.Errorf("read %s:%s: %w", f.repo, f.tag, registry.Explain(err))
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
