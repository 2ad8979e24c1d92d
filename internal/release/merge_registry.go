package release

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// maxManifestReads bounds the manifests (and configs) Run reads at once.
const maxManifestReads = 8

// Run reads every entry's manifest where its part's job pushed it, and the
// config of every platform image (never a layer), and fails, before
// anything is written, when one is not there or its config names another
// platform than its part says. It then builds each image's index with the
// annotations a single push writes, in the release's platform order, the
// other entries after the platforms' images in the same order.
func (m *Merge) Run(ctx context.Context) (*product.Result, error) {
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
		images[i], err = checkEntry(owner[i].name, all[i], d, err)
		return err
	})
	if err != nil {
		return nil, err
	}
	byDigest := map[v1.Hash]v1.Image{}
	for i, e := range all {
		byDigest[e.desc.Digest] = images[i]
	}
	res := &product.Result{}
	for _, mi := range m.images {
		img, err := mi.index(byDigest)
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
func checkEntry(image string, e *mergeEntry, desc *remote.Descriptor, err error) (v1.Image, error) {
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
	if c := verify.ConfigAgrees(cf, *e.desc.Platform); !c.OK {
		return nil, fail("%s", c.Reason)
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

// readBlob reads img's layer h, at most maxStatementBytes.
func readBlob(img v1.Image, h v1.Hash) ([]byte, error) {
	l, err := img.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, maxStatementBytes))
}

// index builds mi's index over the images read, and the Result's record of
// it.
func (mi *mergeImage) index(byDigest map[v1.Hash]v1.Image) (*product.Image, error) {
	descs := make([]v1.Descriptor, len(mi.entries))
	out := &product.Image{Name: mi.name, Contract: mi.contract, BaseName: mi.annotations[specsv1.AnnotationBaseImageName]}
	about := map[string]*product.Attestation{} // platform image digest -> its attestation manifest's
	for i, e := range mi.entries {
		descs[i] = e.desc
		if e.extra {
			if ref := e.desc.Annotations[attestspec.AnnotationReferenceDigest]; ref != "" {
				m, err := byDigest[e.desc.Digest].Manifest()
				if err != nil {
					return nil, err
				}
				about[ref] = mergedAttestation(e.desc.Digest, m)
			}
			continue
		}
		// The manifest was read by Run: no request.
		m, err := byDigest[e.desc.Digest].Manifest()
		if err != nil {
			return nil, err
		}
		out.Platforms = append(out.Platforms, product.Platform{Platform: mi.platforms[i], Digest: e.desc.Digest, Size: e.desc.Size,
			CompressedSize: manifest.CompressedSize(m), Tags: e.tags})
	}
	for k := range out.Platforms {
		out.Platforms[k].Attestation = about[out.Platforms[k].Digest.String()]
	}
	for _, pl := range mi.placements {
		for _, t := range pl.Tags {
			if !slices.Contains(out.Tags, t) {
				out.Tags = append(out.Tags, t)
			}
		}
	}
	return out.WithIndex(manifest.IndexOf(descs, mi.annotations, func(h v1.Hash) (v1.Image, error) {
		if img, ok := byDigest[h]; ok {
			return img, nil
		}
		return nil, fmt.Errorf("index has no image %s", h)
	}))
}
