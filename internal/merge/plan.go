package merge

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// Options configures New.
type Options struct {
	// Platforms is the release's platform list, in index order (merge
	// --platforms); nil takes the parts'.
	Platforms []v1.Platform
	// Recipe, if set, is the recipe every part must have been built from
	// (merge --config).
	Recipe *part.Recipe
	// Repo, if set, is the repository prefix every image is published
	// under (PREFIX/<image name>) instead of where its parts were pushed;
	// their blobs are mounted from there.
	Repo string
	// NoLatest drops the tag latest the parts name (merge --no-latest):
	// a release from a branch moves no latest.
	NoLatest bool
	// Images says how to reach registries (the run's, as opened); its
	// Insecure list also parses the parts' repositories.
	Images imageref.Options
	// ConfigAgrees says whether a platform image's config names the
	// platform its index entry lists, and if not why (verify's check);
	// Run holds every platform image to it. Required.
	ConfigAgrees func(cf *v1.ConfigFile, p v1.Platform) (ok bool, reason string)
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Placement is a repository an image is published to and its tags there.
type Placement struct {
	Repository name.Repository
	Tags       []string
}

// Plan is a set of part files checked against each other (New): every
// image's platforms are there once each, from parts of one release. Run
// then checks them in the registry and gives each image's index entries.
type Plan struct {
	images []*mergeImage
	opts   Options
}

// mergeImage is one image of the release, as its parts give it.
type mergeImage struct {
	name        string
	contract    string        // the GitLab image contract its recipe names
	platforms   []v1.Platform // the image's release platforms, in index order
	entries     []*mergeEntry // platform images, in platform order, then the rest
	annotations map[string]string
	placements  []Placement
}

// mergeEntry is one index entry and the part that contributed it.
type mergeEntry struct {
	desc   v1.Descriptor
	from   *part.File
	source name.Repository // where the part's job pushed it
	tags   []string        // platform tags
	extra  bool            // not a platform's image: an attestation manifest, say
	owner  int             // the position of the platform it belongs to
}

// New checks parts against each other and against opts, before
// anything is read from a registry: they come from one revision, version,
// epoch and recipe, and give every image each of its release platforms
// exactly once and none other. Each refusal is one line naming the parts
// (their files and CI jobs) at fault.
func New(parts []*part.File, opts Options) (*Plan, error) {
	if len(parts) == 0 {
		return nil, errors.New("no part files to merge")
	}
	if opts.ConfigAgrees == nil {
		return nil, errors.New("merge.Options.ConfigAgrees is nil: give it verify's config check")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := agreeOnRelease(parts, opts.Recipe); err != nil {
		return nil, err
	}
	list, source, err := releasePlatforms(parts, opts.Platforms)
	if err != nil {
		return nil, err
	}
	m := &Plan{opts: opts}
	byName := map[string]*mergeImage{}
	where := map[string]string{} // image name -> its placements, as the first part says
	whereFrom := map[string]*part.File{}
	ownPlatforms := map[string]string{}
	for _, f := range parts {
		placed := map[string][]part.Image{}
		var names []string
		for _, pi := range f.Images {
			if _, ok := placed[pi.Name]; !ok {
				names = append(names, pi.Name)
			}
			placed[pi.Name] = append(placed[pi.Name], pi)
		}
		for _, n := range names {
			pis := placed[n]
			mi := byName[n]
			w := placementKey(pis, opts.Repo != "")
			own := strings.Join(pis[0].Platforms, ",")
			if mi == nil {
				if mi, err = newMergeImage(n, pis, list, opts); err != nil {
					return nil, fmt.Errorf("image %s in %s: %w", n, f.Name(), err)
				}
				byName[n], where[n], whereFrom[n], ownPlatforms[n] = mi, w, f, own
				m.images = append(m.images, mi)
			} else if w != where[n] {
				return nil, fmt.Errorf("image %s: parts disagree on its repositories and tags: %s in %s, %s in %s", n, where[n], whereFrom[n].Name(), w, f.Name())
			} else if own != ownPlatforms[n] {
				return nil, fmt.Errorf("image %s: parts disagree on its platforms: [%s] in %s, [%s] in %s (parts of different recipes)", n, ownPlatforms[n], whereFrom[n].Name(), own, f.Name())
			}
			if err := mi.add(f, pis[0], source, opts.Images.Insecure); err != nil {
				return nil, err
			}
		}
	}
	m.images = inPartOrder(m.images, parts)
	for _, mi := range m.images {
		if err := mi.complete(parts); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// inPartOrder sorts images as the parts list them: each part lists its
// images in the release's order, but a part may lack an image (one that
// builds none of its job's platforms), so the first part alone does not
// give the order. Ties (images no part orders) keep their first
// appearance.
func inPartOrder(images []*mergeImage, parts []*part.File) []*mergeImage {
	after := map[string]map[string]bool{} // name -> names that come before it
	for _, f := range parts {
		var seen []string
		for _, pi := range f.Images {
			if slices.Contains(seen, pi.Name) {
				continue // one image in several repositories
			}
			for _, b := range seen {
				if after[pi.Name] == nil {
					after[pi.Name] = map[string]bool{}
				}
				after[pi.Name][b] = true
			}
			seen = append(seen, pi.Name)
		}
	}
	out := make([]*mergeImage, 0, len(images))
	placed := map[string]bool{}
	for len(out) < len(images) {
		next := -1
		for i, mi := range images {
			if placed[mi.name] {
				continue
			}
			ready := true
			for b := range after[mi.name] {
				if !placed[b] {
					ready = false
				}
			}
			if ready {
				next = i
				break
			}
		}
		if next < 0 { // parts that disagree on the order: keep first appearance
			for _, mi := range images {
				if !placed[mi.name] {
					out, placed[mi.name] = append(out, mi), true
				}
			}
			break
		}
		out, placed[images[next].name] = append(out, images[next]), true
	}
	return out
}

// placementKey is the repositories of an image in a part and the tags it
// gets in each, comparable between parts; tagsOnly leaves the
// repositories out (merge --repo: the parts' repositories are only where
// their manifests are read from).
func placementKey(pis []part.Image, tagsOnly bool) string {
	var s []string
	for _, pi := range pis {
		if tagsOnly {
			s = append(s, strings.Join(pi.Tags, ","))
		} else {
			s = append(s, pi.Repository+":"+strings.Join(pi.Tags, ","))
		}
	}
	return strings.Join(s, " ")
}

// newMergeImage starts the image named n from the first part that has it
// (pis: one per repository): its platforms given the release's list, and
// where it goes.
func newMergeImage(n string, pis []part.Image, list []v1.Platform, opts Options) (*mergeImage, error) {
	mi := &mergeImage{name: n, contract: pis[0].Contract}
	own, err := parsePlatforms(pis[0].Platforms)
	if err != nil {
		return nil, err
	}
	switch {
	case len(own) == 0:
		mi.platforms = list
	case opts.Platforms != nil:
		for _, p := range list {
			if platform.Index(own, p) >= 0 {
				mi.platforms = append(mi.platforms, p)
			}
		}
	default:
		mi.platforms = own
	}
	if len(mi.platforms) == 0 {
		return nil, fmt.Errorf("no platforms to release: give merge --platforms")
	}
	// The index a single push makes: Linux first, then Windows by build.
	mi.platforms = platform.Ordered(mi.platforms)
	if opts.Repo != "" {
		repo, err := imageref.ParseRepository(strings.TrimSuffix(opts.Repo, "/")+"/"+n, opts.Images.Insecure)
		if err != nil {
			return nil, err
		}
		var tags []string
		for _, pi := range pis {
			for _, t := range opts.tags(pi.Tags) {
				if !slices.Contains(tags, t) {
					tags = append(tags, t)
				}
			}
		}
		mi.placements = []Placement{{Repository: repo, Tags: tags}}
		return mi, nil
	}
	for _, pi := range pis {
		repo, err := imageref.ParseRepository(pi.Repository, opts.Images.Insecure)
		if err != nil {
			return nil, err
		}
		mi.placements = append(mi.placements, Placement{Repository: repo, Tags: opts.tags(pi.Tags)})
	}
	return mi, nil
}

// tags are a part's image tags this merge writes: all, or all but latest
// with NoLatest.
func (o Options) tags(tags []string) []string {
	if !o.NoLatest {
		return tags
	}
	return slices.DeleteFunc(slices.Clone(tags), func(t string) bool { return t == "latest" })
}

// add takes the entries of f's image pi: its platforms' images at their
// place in the release, the rest after them.
func (mi *mergeImage) add(f *part.File, pi part.Image, source string, insecure []string) error {
	from, err := imageref.ParseRepository(pi.Repository, insecure)
	if err != nil {
		return fmt.Errorf("image %s in %s: %w", mi.name, f.Name(), err)
	}
	if mi.entries == nil {
		mi.entries = make([]*mergeEntry, len(mi.platforms))
	}
	first := -1
	var extras []*mergeEntry
	for _, d := range pi.Manifests {
		e := &mergeEntry{desc: d, from: f, source: from}
		if !attestspec.IsPlatformImage(d) {
			e.extra = true
			extras = append(extras, e)
			continue
		}
		k := platform.IndexSatisfied(mi.platforms, *d.Platform)
		if k < 0 {
			return fmt.Errorf("image %s: %s from %s is not one of its release platforms (%s: %s); merge the parts of one release, or give merge --platforms", mi.name, platform.Format(*d.Platform), f.Name(), source, platform.FormatList(mi.platforms))
		}
		if prev := mi.entries[k]; prev != nil {
			return fmt.Errorf("image %s: %s is in two parts: %s and %s; merge one part per platform", mi.name, platform.Format(mi.platforms[k]), prev.from.Name(), f.Name())
		}
		e.owner = k
		for _, t := range pi.PlatformTags {
			if t.Digest == d.Digest {
				e.tags = append(e.tags, t.Tag)
			}
		}
		mi.entries[k] = e
		if first < 0 || k < first {
			first = k
		}
		if k == 0 {
			mi.annotations = pi.Annotations
		}
	}
	for _, e := range extras {
		e.owner = max(first, 0) // an attestation's is its subject's: complete
		mi.entries = append(mi.entries, e)
	}
	return nil
}

// complete fails when a release platform of the image is in no part, when
// an attestation manifest is about none of its platform images, or when
// the parts disagree on the index annotations; it orders the extra entries
// by the platform they belong to (an attestation's is the one it is
// about, another entry's the first of its part).
func (mi *mergeImage) complete(parts []*part.File) error {
	for k, p := range mi.platforms {
		if mi.entries[k] == nil {
			var names []string
			for _, f := range parts {
				names = append(names, f.Path)
			}
			return fmt.Errorf("image %s: %s is missing: none of the %d parts has it (%s); merge after every platform's job has succeeded", mi.name, platform.Format(p), len(parts), strings.Join(names, ", "))
		}
	}
	n := len(mi.platforms)
	for _, e := range mi.entries[n:] {
		if !attestspec.IsAttestation(e.desc) {
			continue
		}
		ref := e.desc.Annotations[attestspec.AnnotationReferenceDigest]
		e.owner = slices.IndexFunc(mi.entries[:n], func(pe *mergeEntry) bool { return pe.desc.Digest.String() == ref })
		if e.owner < 0 {
			return fmt.Errorf("image %s: attestation manifest %s from %s is about %q (its %s), none of the image's platform images; merge the part files as their jobs wrote them", mi.name, e.desc.Digest, e.from.Name(), ref, attestspec.AnnotationReferenceDigest)
		}
	}
	slices.SortStableFunc(mi.entries[n:], func(a, b *mergeEntry) int { return a.owner - b.owner })
	// The index carries the annotations of the part with the first
	// platform (its base, as a single push names it); the rest must agree.
	base := []string{specsv1.AnnotationBaseImageName, specsv1.AnnotationBaseImageDigest}
	firstFrom := mi.entries[0].from
	for _, e := range mi.entries[1:n] {
		if e.from == firstFrom {
			continue
		}
		theirs := annotationsOf(e.from, mi.name)
		for _, k := range slices.Sorted(maps.Keys(union(mi.annotations, theirs))) {
			if !slices.Contains(base, k) && mi.annotations[k] != theirs[k] {
				return fmt.Errorf("image %s: parts disagree on the index annotation %s: %q in %s, %q in %s", mi.name, k, mi.annotations[k], firstFrom.Name(), theirs[k], e.from.Name())
			}
		}
	}
	return nil
}

// annotationsOf are the index annotations f gives the image named n.
func annotationsOf(f *part.File, n string) map[string]string {
	for _, pi := range f.Images {
		if pi.Name == n {
			return pi.Annotations
		}
	}
	return nil
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// Placements say where each image goes and with which tags, by name.
func (m *Plan) Placements() map[string][]Placement {
	out := map[string][]Placement{}
	for _, mi := range m.images {
		out[mi.name] = mi.placements
	}
	return out
}

// Platforms are the release's platforms, every image's, in order.
func (m *Plan) Platforms() []v1.Platform {
	var out []v1.Platform
	for _, mi := range m.images {
		for _, p := range mi.platforms {
			if platform.Index(out, p) < 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// Names are the images' names, in order.
func (m *Plan) Names() []string {
	var out []string
	for _, mi := range m.images {
		out = append(out, mi.name)
	}
	return out
}
