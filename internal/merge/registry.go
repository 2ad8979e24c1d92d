package merge

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// Result is what Run checked: each image's index entries, ready to be
// assembled into the index a single push writes.
type Result struct {
	Images []Image
}

// Image is one image's index, as its parts give it.
type Image struct {
	Name string
	// Contract is the GitLab image contract its recipe names.
	Contract string
	// Annotations are the index's (those of the part with the first
	// platform); BaseName is its org.opencontainers.image.base.name.
	Annotations map[string]string
	BaseName    string
	// Tags are the image's tags, every repository's, each once.
	Tags []string
	// Platforms are its platform images, in index order.
	Platforms []Platform
	// Entries are the index's entries in order (the platform images, then
	// the other entries by the platform they belong to), each with the
	// image read for it.
	Entries []Entry
}

// Entry is one index entry and its manifest as read.
type Entry struct {
	Descriptor v1.Descriptor
	Image      v1.Image
}

// Platform is one platform image of an Image.
type Platform struct {
	Platform v1.Platform
	// Descriptor is its index entry; Manifest its manifest as read.
	Descriptor v1.Descriptor
	Manifest   *v1.Manifest
	// Tags are its platform tags.
	Tags []string
	// Attestation is the entry about it (vnd.docker.reference.digest),
	// nil when there is none: its digest and manifest.
	Attestation *Attestation
}

// Attestation is an attestation manifest of the index about a platform
// image.
type Attestation struct {
	Digest   v1.Hash
	Manifest *v1.Manifest
}

// maxManifestReads bounds the manifests (and configs) Run reads at once.
const maxManifestReads = 8

// Run reads every entry's manifest where its part's job pushed it, and the
// config of every platform image (never a layer), and fails, before
// anything is written, when one is not there or its config names another
// platform than its part says. It then builds each image's index with the
// annotations a single push writes, in the release's platform order, the
// other entries after the platforms' images in the same order: Result
// gives them, to be assembled.
func (m *Plan) Run(ctx context.Context) (*Result, error) {
	start := time.Now()
	var all []*mergeEntry
	var owner []*mergeImage
	for _, mi := range m.images {
		for _, e := range mi.entries {
			all = append(all, e)
			owner = append(owner, mi)
		}
	}
	refs := make([]name.Digest, len(all))
	for i, e := range all {
		refs[i] = e.source.Digest(e.desc.Digest.String())
	}
	images := make([]v1.Image, len(all))
	err := registry.GetAll(ctx, m.opts.Images, refs, maxManifestReads, func(i int, d *remote.Descriptor, err error) error {
		images[i], err = checkEntry(owner[i].name, all[i], d, err, m.opts.ConfigAgrees)
		return err
	})
	if err != nil {
		return nil, err
	}
	byDigest := map[v1.Hash]v1.Image{}
	for i, e := range all {
		byDigest[e.desc.Digest] = images[i]
	}
	res := &Result{}
	for _, mi := range m.images {
		img, err := mi.result(byDigest)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", mi.name, err)
		}
		res.Images = append(res.Images, *img)
	}
	m.opts.Logger.Info("parts checked", "images", len(m.images), "manifests", len(all), "duration", time.Since(start).Round(time.Millisecond))
	return res, nil
}

// checkEntry checks e's manifest, desc as read (getErr its error) from the
// repository its part's job pushed it to, against the part: same media type and size, for a
// platform's image a config that names that platform, and for an
// attestation manifest a subject that is the image its index entry names.
func checkEntry(image string, e *mergeEntry, desc *remote.Descriptor, err error, agrees func(*v1.ConfigFile, v1.Platform) (bool, string)) (v1.Image, error) {
	what := "manifest " + e.desc.Digest.String()
	switch {
	case !e.extra:
		what += " of " + platform.Format(*e.desc.Platform)
	case attestspec.IsAttestation(e.desc):
		what = "attestation " + what
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("image %s: %s from %s: %s", image, what, e.from.Name(), fmt.Sprintf(format, args...))
	}
	if err != nil { // a 404 is imageref.ErrNotFound
		return nil, fmt.Errorf("image %s: %s from %s: not in %s: %w (push --by-digest of that job did not finish, or pushed elsewhere)", image, what, e.from.Name(), e.source, registry.ExplainRead(err))
	}
	if desc.MediaType != e.desc.MediaType || desc.Size != e.desc.Size {
		return nil, fail("%s has it as %s of %d bytes, the part says %s of %d", e.source, desc.MediaType, desc.Size, e.desc.MediaType, e.desc.Size)
	}
	if !desc.MediaType.IsImage() {
		return nil, fail("a %s, not an image manifest", desc.MediaType)
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fail("%v", err)
	}
	if e.extra {
		if attestspec.IsAttestation(e.desc) {
			return img, checkSubject(img, e.desc, fail)
		}
		return img, nil
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fail("config: %v", registry.Explain(err))
	}
	if ok, reason := agrees(cf, *e.desc.Platform); !ok {
		return nil, fail("%s", reason)
	}
	return img, nil
}

// maxStatementBytes bounds one in-toto statement merge reads.
const maxStatementBytes = 64 << 20

// checkSubject fails when the attestation manifest img is not about the
// image its index entry d names. BuildKit's form names no subject in the
// manifest: each in-toto statement it holds must name that image as its
// subject (a subject in the manifest, as an OCI 1.1 artifact has, must
// name it too). The statements are read from the registry, bounded.
func checkSubject(img v1.Image, d v1.Descriptor, fail func(string, ...any) error) error {
	m, err := img.Manifest()
	if err != nil {
		return fail("%v", err)
	}
	ref := d.Annotations[attestspec.AnnotationReferenceDigest]
	want, err := v1.NewHash(ref)
	if err != nil {
		return fail("its index entry's %s %q is no digest; merge the part files as their jobs wrote them", attestspec.AnnotationReferenceDigest, ref)
	}
	if m.Subject != nil && m.Subject.Digest != want {
		return fail("its subject is %s, its index entry says it is about %s (%s); merge the part files as their jobs wrote them", m.Subject.Digest, ref, attestspec.AnnotationReferenceDigest)
	}
	n := 0
	for _, l := range m.Layers {
		if string(l.MediaType) != attestspec.MediaTypeInToto {
			continue
		}
		n++
		if l.Size > maxStatementBytes {
			return fail("statement %s is %d bytes, more than %d", l.Digest, l.Size, maxStatementBytes)
		}
		data, err := readBlob(img, l.Digest)
		if err != nil {
			return fail("statement %s: %v", l.Digest, registry.Explain(err))
		}
		if err := attestspec.CheckAbout(data, want); err != nil {
			return fail("statement %s: %v, which its index entry says it is about (%s); merge the part files as their jobs wrote them", l.Digest, err, attestspec.AnnotationReferenceDigest)
		}
	}
	if n == 0 {
		return fail("holds no in-toto statement, its index entry says it is about %s; merge the part files as their jobs wrote them", ref)
	}
	return nil
}

// readBlob reads img's layer h, refused when more than maxStatementBytes.
func readBlob(img v1.Image, h v1.Hash) ([]byte, error) {
	l, err := img.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	return imageref.ReadBlob(l, maxStatementBytes)
}

// result gives mi's index entries over the images read.
func (mi *mergeImage) result(byDigest map[v1.Hash]v1.Image) (*Image, error) {
	out := &Image{Name: mi.name, Contract: mi.contract, Annotations: mi.annotations,
		BaseName: mi.annotations[specsv1.AnnotationBaseImageName]}
	about := map[string]*Attestation{} // platform image digest -> its attestation manifest
	for i, e := range mi.entries {
		// The manifests were read by Run: no request.
		img := byDigest[e.desc.Digest]
		out.Entries = append(out.Entries, Entry{Descriptor: e.desc, Image: img})
		ref := e.desc.Annotations[attestspec.AnnotationReferenceDigest]
		if e.extra && ref == "" {
			continue
		}
		m, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		if e.extra {
			about[ref] = &Attestation{Digest: e.desc.Digest, Manifest: m}
			continue
		}
		out.Platforms = append(out.Platforms, Platform{Platform: mi.platforms[i], Descriptor: e.desc, Manifest: m, Tags: e.tags})
	}
	for k := range out.Platforms {
		out.Platforms[k].Attestation = about[out.Platforms[k].Descriptor.Digest.String()]
	}
	for _, pl := range mi.placements {
		for _, t := range pl.Tags {
			if !slices.Contains(out.Tags, t) {
				out.Tags = append(out.Tags, t)
			}
		}
	}
	return out, nil
}
