package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/registry"
)

// pushImage pushes img by digest as ref. A manifest this Session found in
// place while the release built (see Uploader.Image) is not sent again;
// one it found missing is sent without asking again. A manifest naming a
// subject goes past go-containerregistry's writers: its blobs are
// uploaded, then, once after is closed (nil: at once), its raw manifest is
// PUT by digest, and no tag changes (see registry.Raw).
func (p *publisher) pushImage(ctx context.Context, ref name.Digest, img v1.Image, after <-chan struct{}) error {
	in, known := p.reg.Found(ref)
	if in {
		return nil
	}
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	if !hasSubject(raw) {
		if !known {
			return p.reg.Push(ctx, ref, img)
		}
		if err := uploadBlobs(ctx, p.reg, ref.Context(), img); err != nil {
			return err
		}
		return p.reg.Put(ctx, ref, img)
	}
	if err := uploadBlobs(ctx, p.reg, ref.Context(), img); err != nil {
		return err
	}
	if after != nil {
		select {
		case <-after:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	return p.reg.PutManifest(ctx, ref.Context(), ref.DigestStr(), mt, raw)
}

// pushReferrers pushes an image's referrers by digest, after its platform
// manifests.
func (p *publisher) pushReferrers(ctx context.Context, repo name.Repository, refs []Referrer) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(p.jobs, 4))
	for _, r := range refs {
		g.Go(func() error {
			ref := repo.Digest(r.Entry.Digest.String())
			if err := p.pushImage(gctx, ref, r.Manifest, nil); err != nil {
				return fmt.Errorf("push %s: %w", ref, registry.Explain(err))
			}
			p.log.Info("pushed", "image", repo.String(), "referrer", r.Entry.ArtifactType, "subject", r.Subject.String(), "digest", r.Entry.Digest.String())
			return nil
		})
	}
	return g.Wait()
}

// fallbackTag is a referrers index to write as tag sha256-<subject hex>,
// for a registry without the referrers API.
type fallbackTag struct {
	repo    name.Repository
	tag     string
	subject v1.Hash
	add     []v1.Descriptor // the release's referrers of subject
	count   int             // referrers it lists, as planned
}

// FallbackTag is the referrers tag schema's tag of subject: sha256-<hex>.
func FallbackTag(subject v1.Hash) string { return subject.Algorithm + "-" + subject.Hex }

// planFallbacks decides, before any tag is written, where each image's
// referrers are listed: a registry with the referrers API lists them
// itself; otherwise each subject's fallback tag gets a referrers index,
// the referrers already listed there kept. A registry that resolves the
// fallback tag to the subject itself (GitLab's does: it takes
// sha256-<hex> as the digest) would lose the subject's tag-like name to
// it, or serve the image where clients expect the index: it is refused,
// naming the registry, before anything is tagged.
func (p *publisher) planFallbacks(ctx context.Context, images []Image, repos []name.Repository) ([]fallbackTag, error) {
	var out []fallbackTag
	api := map[string]bool{}
	for i, img := range images {
		repo := repos[i]
		var subjects []v1.Hash
		by := map[v1.Hash][]v1.Descriptor{}
		for _, r := range img.Referrers {
			if _, ok := by[r.Subject]; !ok {
				subjects = append(subjects, r.Subject)
			}
			by[r.Subject] = append(by[r.Subject], r.Entry)
		}
		if len(subjects) == 0 {
			continue
		}
		has, known := api[repo.String()]
		if !known {
			var err error
			if has, err = p.listsReferrers(ctx, repo, subjects[0], by[subjects[0]]); err != nil {
				return nil, err
			}
			api[repo.String()] = has
			p.log.Info("referrers", "repository", repo.String(), "api", has)
		}
		if has {
			continue
		}
		for _, s := range subjects {
			f, err := p.fallbackIndex(ctx, repo, s, by[s])
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// listsReferrers reports whether repo's registry keeps subject's referrers
// itself: it answers the referrers API, and its answer lists pushed, the
// referrers this release put there already. A registry (or a front) that
// answers the API with a list lacking them would leave the release's
// attestations and signatures findable by nobody: the fallback tags are
// written then, with a warning.
func (p *publisher) listsReferrers(ctx context.Context, repo name.Repository, subject v1.Hash, pushed []v1.Descriptor) (bool, error) {
	listed, api, err := p.reg.ListedReferrers(ctx, repo, subject)
	if err != nil || !api {
		return false, err
	}
	for _, d := range pushed {
		if !slices.Contains(listed, d.Digest) {
			p.log.Warn(fmt.Sprintf("%s answers the referrers API but does not list %s, pushed as a referrer of %s: writing the fallback tags (sha256-<hex>) instead", repo, d.Digest, subject))
			return false, nil
		}
	}
	return true, nil
}

// fallbackIndex reads subject's fallback tag, checking that it can hold a
// referrers index, and plans the release's referrers add there.
func (p *publisher) fallbackIndex(ctx context.Context, repo name.Repository, subject v1.Hash, add []v1.Descriptor) (fallbackTag, error) {
	f := fallbackTag{repo: repo, tag: FallbackTag(subject), subject: subject, add: add}
	current, err := p.readFallback(ctx, f)
	if err != nil {
		return fallbackTag{}, err
	}
	f.count = len(withReferrers(current, add))
	return f, nil
}

// resolvesToSubject fails when what the registry served for the fallback
// tag is the subject itself.
func resolvesToSubject(repo name.Repository, tag string, subject v1.Hash, raw []byte) error {
	got, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if got != subject {
		return nil
	}
	return fmt.Errorf("registry %s resolves the tag %s to the manifest %s itself, so it cannot hold the referrers fallback tag there; publish the attestations in the image index with --attest index (or --attest none)",
		repo.RegistryStr(), tag, subject)
}

// hasSubject reports whether raw, a manifest, names a subject.
func hasSubject(raw []byte) bool {
	var m struct {
		Subject *v1.Descriptor `json:"subject"`
	}
	return json.Unmarshal(raw, &m) == nil && m.Subject != nil
}
