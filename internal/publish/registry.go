package publish

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// RegistryOptions configures ToRegistry.
type RegistryOptions struct {
	// Session reaches the registries (credentials, the run's transport
	// stack); the one an Uploader sent blobs with finds them in place. Nil:
	// a Session of its own, anonymous over remote.DefaultTransport.
	Session *registry.Session
	// Jobs bounds how many platform images are pushed at once; 0 means 4.
	Jobs   int
	Logger *slog.Logger
	// Signing, if its Signer is set, signs every index and each of its
	// entries once all is in place, before any tag moves (see Signer).
	Signing Signing
}

// Result says what ToRegistry did.
type Result struct {
	// Written lists the tags written, as full references, in order.
	Written []string
	// Signatures lists the signatures written, per image in order: the
	// index's, then its entries'.
	Signatures []Signature
}

// ToRegistry publishes images: everything by digest, a HEAD check of every
// manifest, then the tags. When a tag fails, the error names the tags that
// were written and those that were not; running again writes the rest.
func ToRegistry(ctx context.Context, images []Image, opts RegistryOptions) (*Result, error) {
	repos, err := checkTags(images)
	if err != nil {
		return nil, err
	}
	p, err := newPublisher(opts)
	if err != nil {
		return nil, err
	}
	return p.release(ctx, images, repos, opts.Signing)
}

// release is ToRegistry's phases, once the tags are checked.
func (p *publisher) release(ctx context.Context, images []Image, repos []name.Repository, signing Signing) (*Result, error) {
	if err := p.pushByDigest(ctx, images, repos); err != nil {
		return nil, err
	}
	if err := p.checkManifests(ctx, images, repos, true); err != nil {
		return nil, err
	}
	copied, err := p.copyCosignTags(ctx, images, repos)
	if err != nil {
		return nil, err
	}
	var legacy []legacyTag
	var sigs []Signature
	if signing.Signer != nil {
		images = slices.Clone(images) // signing adds referrers
		for i := range images {
			images[i].Referrers = slices.Clone(images[i].Referrers)
		}
		if legacy, sigs, err = p.signAll(ctx, images, repos, signing); err != nil {
			return nil, err
		}
	}
	legacy = append(withoutSigned(copied, legacy), legacy...)
	fallbacks, err := p.planFallbacks(ctx, images, repos)
	if err != nil {
		return nil, err
	}
	res, err := p.writeTags(ctx, images, repos, fallbacks, legacy)
	if res != nil {
		res.Signatures = sigs
	}
	return res, err
}

// PushByDigest is ToRegistry without the index and the tags: every blob and
// platform manifest of images by digest, then a HEAD check of each
// manifest. The tags of images are checked, for the merge that writes them.
func PushByDigest(ctx context.Context, images []Image, opts RegistryOptions) error {
	repos, err := checkTags(images)
	if err != nil {
		return err
	}
	p, err := newPublisher(opts)
	if err != nil {
		return err
	}
	for i, img := range images {
		if err := p.pushPlatforms(ctx, repos[i], img.Index); err != nil {
			return err
		}
	}
	return p.checkManifests(ctx, images, repos, false)
}

// publisher is one ToRegistry's phases on the registries' Session.
type publisher struct {
	reg  *registry.Session
	jobs int
	log  *slog.Logger
	// sleep waits between the rounds of confirmFallbacks; tests inject it.
	sleep func(ctx context.Context, d time.Duration) error
	// again are the indexes (REPOSITORY@DIGEST) the registry held before
	// this release put them: a release pushed again, whose tags may be in
	// place already (see tagInPlace).
	again map[string]bool
	// cosignBase: the copyCosignTags images by tag, signLegacy's bases.
	cosignBase map[string]v1.Image
}

// newPublisher uses opts' Session, where the blobs an Uploader sent are
// known to be there, else one of its own.
func newPublisher(opts RegistryOptions) (*publisher, error) {
	p := &publisher{reg: opts.Session, jobs: opts.Jobs, log: logger(opts.Logger), sleep: sleepContext, again: map[string]bool{}}
	if p.reg == nil {
		var err error
		if p.reg, err = registry.NewSession(imageref.Options{}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkTags fails, before anything is pushed, when a tag of images is not
// a valid tag of its repository; it returns each image's repository.
func checkTags(images []Image) ([]name.Repository, error) {
	repos := make([]name.Repository, len(images))
	for i, img := range images {
		repos[i] = img.Repository
		for _, t := range img.Tags {
			if _, err := name.NewTag(repos[i].Name() + ":" + t); err != nil {
				return nil, fmt.Errorf("tag %q of %s: %w", t, img.Repository, err)
			}
		}
		for _, t := range img.PlatformTags {
			if _, err := name.NewTag(repos[i].Name() + ":" + t.Tag); err != nil {
				return nil, fmt.Errorf("tag %q of %s: %w", t.Tag, img.Repository, err)
			}
		}
	}
	return repos, nil
}

// pushByDigest is phase 1: every blob and manifest, by digest: each
// platform's image (in parallel), then the index over them.
func (p *publisher) pushByDigest(ctx context.Context, images []Image, repos []name.Repository) error {
	for i, img := range images {
		if err := p.pushPlatforms(ctx, repos[i], img.Index); err != nil {
			return err
		}
		if err := p.pushReferrers(ctx, repos[i], img.Referrers); err != nil {
			return err
		}
		digest, err := img.Index.Digest()
		if err != nil {
			return err
		}
		ref := repos[i].Digest(digest.String())
		if err := p.pushIndex(ctx, ref, img.Index); err != nil {
			return fmt.Errorf("push %s: %w", ref, registry.Explain(err))
		}
		p.log.Info("pushed", "image", repos[i].String(), "digest", digest.String())
	}
	return nil
}

// pushIndex writes idx as ref once its children are in place: unless the
// registry has it (a release pushed again), its manifest by digest.
func (p *publisher) pushIndex(ctx context.Context, ref name.Digest, idx v1.ImageIndex) error {
	in, err := p.reg.Has(ctx, ref)
	if err != nil {
		return err
	}
	if in {
		p.again[ref.String()] = true
		return nil
	}
	return p.reg.Put(ctx, ref, idx)
}

// checkManifests is phase 2: every manifest (the index's too, withIndex)
// is where we put it, asked all at once (a round trip each; on a real
// network they would add up). A manifest this Session found in place
// (Session.Has) was checked by that very question and is not asked again.
func (p *publisher) checkManifests(ctx context.Context, images []Image, repos []name.Repository, withIndex bool) error {
	var refs []name.Digest
	for i, img := range images {
		digests, err := manifestDigests(img.Index, withIndex)
		if err != nil {
			return err
		}
		for _, d := range digests {
			refs = append(refs, repos[i].Digest(d.String()))
		}
		for _, r := range img.Referrers {
			refs = append(refs, repos[i].Digest(r.Entry.Digest.String()))
		}
	}
	checks, cctx := errgroup.WithContext(ctx)
	checks.SetLimit(maxChecks)
	asked := 0
	for _, ref := range refs {
		if in, _ := p.reg.Found(ref); in {
			continue
		}
		asked++
		checks.Go(func() error {
			desc, err := p.reg.Head(cctx, ref)
			if err != nil {
				return fmt.Errorf("check %s: %w", ref, registry.Explain(err))
			}
			if desc.Digest.String() != ref.DigestStr() {
				return fmt.Errorf("check %s: registry returned %s", ref, desc.Digest)
			}
			return nil
		})
	}
	if err := checks.Wait(); err != nil {
		return err
	}
	p.log.Info("manifests checked", "manifests", len(refs), "asked", asked)
	return nil
}

// writeTags is phase 3: the tags, in order (see tagOrder). A failure
// returns a TagError naming what was and was not written.
func (p *publisher) writeTags(ctx context.Context, images []Image, repos []name.Repository, fallbacks []fallbackTag, legacy []legacyTag) (*Result, error) {
	res := &Result{}
	pending := tagOrder(images)
	notWritten := func(n, l int) []string {
		var out []string
		for _, f := range fallbacks[n:] {
			out = append(out, f.repo.Tag(f.tag).String())
		}
		for _, lt := range legacy[l:] {
			out = append(out, lt.repo.Tag(lt.tag).String())
		}
		for _, rest := range pending {
			out = append(out, repos[rest.image].Tag(rest.tag).String())
		}
		return out
	}
	var slowest time.Duration
	for n, f := range fallbacks {
		tag := f.repo.Tag(f.tag)
		start := time.Now()
		count, err := p.writeFallback(ctx, f)
		slowest = max(slowest, time.Since(start))
		if err != nil {
			return res, newTagError(tag.String(), res.Written, notWritten(n, 0), err)
		}
		res.Written = append(res.Written, tag.String())
		p.log.Info("tagged", "tag", tag.String(), "referrers", count)
	}
	if tag, err := p.confirmFallbacks(ctx, fallbacks, settleFor(slowest)); err != nil { // tag lacks some of ours
		written := slices.DeleteFunc(slices.Clone(res.Written), func(w string) bool { return w == tag })
		return res, &TagError{Tag: tag, Written: written, NotWritten: append([]string{tag}, notWritten(len(fallbacks), 0)...), Err: registry.Explain(err)}
	}
	for l, lt := range legacy {
		tag := lt.repo.Tag(lt.tag)
		if err := p.reg.Tag(ctx, tag, lt.image); err != nil {
			return res, newTagError(tag.String(), res.Written, notWritten(len(fallbacks), l), err)
		}
		res.Written = append(res.Written, tag.String())
		p.log.Info("tagged", "tag", tag.String(), "signature", true)
	}
	for n, t := range pending {
		img := images[t.image]
		tag := repos[t.image].Tag(t.tag)
		var taggable remote.Taggable = img.Index
		if t.platform {
			child, err := img.Index.Image(t.digest)
			if err != nil {
				return res, err
			}
			taggable = child
		}
		if p.tagInPlace(ctx, repos[t.image].Digest(t.index.String()), tag, t.digest) {
			res.Written = append(res.Written, tag.String())
			p.log.Info("tag in place", "tag", tag.String(), "digest", t.digest.String())
			continue
		}
		if err := p.reg.Tag(ctx, tag, taggable); err != nil {
			var rest []string
			for _, r := range pending[n:] {
				rest = append(rest, repos[r.image].Tag(r.tag).String())
			}
			return res, newTagError(tag.String(), res.Written, rest, err)
		}
		res.Written = append(res.Written, tag.String())
		p.log.Info("tagged", "tag", tag.String(), "digest", t.digest.String())
	}
	return res, nil
}

// tagInPlace reports whether tag already points at digest, asking (a HEAD,
// far cheaper for a registry than a PUT that makes it check every child of
// an index again) only when the release's index was in place before it
// (pushIndex): a release pushed again. Any failure to ask is "no": the tag
// is then written as usual.
func (p *publisher) tagInPlace(ctx context.Context, index name.Digest, tag name.Tag, digest v1.Hash) bool {
	if !p.again[index.String()] {
		return false
	}
	desc, err := p.reg.Head(ctx, tag)
	return err == nil && desc.Digest == digest
}

// maxChecks bounds the manifest checks in flight before tagging.
const maxChecks = 8

// pushPlatforms pushes every image of idx by digest, jobs at a time, the
// platform images first: an attestation manifest (BuildKit's form, no
// subject) takes a slot only after every platform image has one, and one
// naming a subject goes past go-containerregistry's writers (see
// pushImage), its manifest only once the image it is about is in place.
func (p *publisher) pushPlatforms(ctx context.Context, repo name.Repository, idx v1.ImageIndex) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	jobs := p.jobs
	if jobs <= 0 {
		jobs = 4
	}
	pushed := map[v1.Hash]chan struct{}{} // closed once that platform image is in place
	var plain, about []v1.Descriptor
	for _, d := range im.Manifests {
		if attestspec.IsAttestation(d) {
			about = append(about, d)
		} else {
			plain = append(plain, d)
			pushed[d.Digest] = make(chan struct{})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	// Every platform image is started before any attestation takes a slot,
	// so an attestation waiting for its image never holds up that image.
	for _, d := range append(plain, about...) {
		g.Go(func() error {
			img, err := idx.Image(d.Digest)
			if err != nil {
				return err
			}
			ref := repo.Digest(d.Digest.String())
			start := time.Now()
			var after <-chan struct{}
			if sub, err := v1.NewHash(d.Annotations[attestspec.AnnotationReferenceDigest]); err == nil && attestspec.IsAttestation(d) {
				after = pushed[sub]
			}
			if err := p.pushImage(gctx, ref, img, after); err != nil {
				return fmt.Errorf("push %s: %w", ref, registry.Explain(err))
			}
			if c, ok := pushed[d.Digest]; ok {
				close(c)
			}
			var pf string
			if d.Platform != nil {
				pf = platform.Format(*d.Platform)
			}
			p.log.Info("pushed", "image", repo.String(), "platform", pf, "digest", d.Digest.String(), "duration", time.Since(start).Round(time.Millisecond))
			return nil
		})
	}
	return g.Wait()
}

// manifestDigests are the digests of idx's entries, after idx's own when
// withIndex.
func manifestDigests(idx v1.ImageIndex, withIndex bool) ([]v1.Hash, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []v1.Hash
	if withIndex {
		d, err := idx.Digest()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	for _, m := range im.Manifests {
		out = append(out, m.Digest)
	}
	return out, nil
}
