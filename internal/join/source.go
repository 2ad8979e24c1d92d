package join

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// Attached is an attestation manifest of a source index that goes along
// with the platform image it is about, under its own index entry.
type Attached struct {
	Descriptor v1.Descriptor
	Manifest   v1.Image
}

// candidate is one platform image a source offers, before its evidence is
// read.
type candidate struct {
	source   string // as the user wrote it
	pinned   string // the source pinned by digest
	digest   v1.Hash
	image    v1.Image
	listed   *v1.Platform // the source index's entry platform; nil for a single image
	attached []Attached
	// repo is the source's repository, where its referrers are asked
	// for; nil for a layout or archive, which keep none.
	repo *name.Repository
}

// resolve reads one source and returns the platform images it offers that
// want asks for (all of them when want is empty). A source that is an
// attestation, or an index of indexes, is refused.
func resolve(ctx context.Context, source string, want []v1.Platform, opts imageref.Options) ([]candidate, error) {
	ref, err := imageref.Parse(source, opts.Insecure)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	if ref.Transport == imageref.Scratch {
		return nil, fmt.Errorf("source %s: scratch is no image to join", source)
	}
	art, err := registry.Read(ctx, ref, opts)
	if err != nil {
		// imageref's errors name the reference already.
		if err = registry.Explain(err); strings.HasPrefix(err.Error(), ref.String()+": ") {
			return nil, fmt.Errorf("source %w", err)
		}
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	if art.Image != nil {
		if about, ok, err := attestationSubject(art.Image); err != nil {
			return nil, fmt.Errorf("source %s: %w", source, err)
		} else if ok {
			return nil, fmt.Errorf("source %s is an attestation manifest (about %s), not an image: name the image it is about", source, about)
		}
		c := candidate{source: source, pinned: art.Pinned(), digest: art.Digest, image: art.Image}
		return withRepo(ref, []candidate{c}), nil
	}
	cs, err := expand(source, art, want)
	return withRepo(ref, cs), err
}

// withRepo names the registry repository of ref's candidates.
func withRepo(ref imageref.Ref, cs []candidate) []candidate {
	if ref.Transport != imageref.Registry {
		return cs
	}
	repo := ref.Name.Context()
	for i := range cs {
		cs[i].repo = &repo
	}
	return cs
}

// expand lists the platform images of the index art that want asks for,
// each with the attestation entries about it.
func expand(source string, art *imageref.Artifact, want []v1.Platform) ([]candidate, error) {
	im, err := art.Index.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	about := map[string][]v1.Descriptor{}
	for _, d := range im.Manifests {
		if attestspec.IsAttestation(d) {
			ref := d.Annotations[attestspec.AnnotationReferenceDigest]
			about[ref] = append(about[ref], d)
		}
	}
	var out []candidate
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			return nil, fmt.Errorf("source %s lists an index (%s) among its entries: name that index as a source of its own", source, d.Digest)
		case !attestspec.IsPlatformImage(d):
			continue
		}
		p := platform.Normalize(*d.Platform)
		if len(want) > 0 && platform.IndexSatisfied(want, p) < 0 {
			continue
		}
		img, err := art.Index.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("source %s: %s: %w", source, platform.Format(p), registry.Explain(err))
		}
		c := candidate{source: source, pinned: art.Pinned(), digest: d.Digest, image: img, listed: &p}
		for _, ad := range about[d.Digest.String()] {
			am, err := art.Index.Image(ad.Digest)
			if err != nil {
				return nil, fmt.Errorf("source %s: attestation %s: %w", source, ad.Digest, registry.Explain(err))
			}
			c.attached = append(c.attached, Attached{Descriptor: ad, Manifest: am})
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("source %s is an index with no platform image among %s", source, wanted(want))
	}
	return out, nil
}

// attestationSubject reports whether img is an attestation manifest rather
// than a platform's image: it has a subject, BuildKit's artifact type, an
// in-toto layer or a config for the platform unknown/unknown.
func attestationSubject(img v1.Image) (string, bool, error) {
	m, err := img.Manifest()
	if err != nil {
		return "", false, err
	}
	about := "no subject"
	if m.Subject != nil {
		about = m.Subject.Digest.String()
	}
	if m.Subject != nil || m.ArtifactType == attestspec.ArtifactTypeAttestationManifest {
		return about, true, nil
	}
	for _, l := range m.Layers {
		if string(l.MediaType) == attestspec.MediaTypeInToto {
			if m.Subject == nil {
				about = statementSubject(img, l.Digest)
			}
			return about, true, nil
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", false, fmt.Errorf("config: %w", registry.Explain(err))
	}
	if cf.OS == "unknown" {
		return about, true, nil
	}
	return "", false, nil
}

// statementSubject names what an attestation manifest of BuildKit's
// default form (no subject field) is about: the subject of its in-toto
// statement, read up to maxStatement bytes; "no subject" when it cannot say.
func statementSubject(img v1.Image, layer v1.Hash) string {
	l, err := img.LayerByDigest(layer)
	if err != nil {
		return "no subject"
	}
	rc, err := l.Uncompressed()
	if err != nil {
		return "no subject"
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxStatement))
	if err != nil {
		return "no subject"
	}
	subjects, err := attestspec.StatementSubjects(b)
	if err != nil || len(subjects) == 0 {
		return "no subject"
	}
	return subjects[0].String()
}

// maxStatement bounds what is read of an attestation's statement to name
// its subject in a refusal.
const maxStatement = 1 << 20

func wanted(want []v1.Platform) string {
	if len(want) == 0 {
		return "any platform"
	}
	return platform.FormatList(want)
}
