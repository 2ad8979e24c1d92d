package join

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// baseEvidence is what a Windows source's base says about the build its
// layers are for, read from the base's manifest and config only (its
// foreign layers are never read).
type baseEvidence struct {
	// Ref is the base as the source's annotations name it, pinned by
	// digest; "" when no base was read (Unseen says why).
	Ref string
	// OSVersion is the base's config's os.version.
	OSVersion string
	// Unseen says why the base could not be read ("" when it was).
	Unseen string
}

// windowsBase reads the base a Windows image names in its manifest's
// org.opencontainers.image.base.name and .base.digest annotations (what
// helperbuild writes, and BuildKit with its base-image annotations): the
// base's config's os.version, and that the base's layers are the image's
// first layers (else the annotation is no evidence and the source is
// refused). An image without the annotations, or whose base's registry
// cannot be read, yields Unseen: the foreign layers themselves say nothing
// that can be read without fetching them from Microsoft.
func windowsBase(ctx context.Context, img v1.Image, cf *v1.ConfigFile, want v1.Platform, opts imageref.Options) (baseEvidence, error) {
	m, err := img.Manifest()
	if err != nil {
		return baseEvidence{}, err
	}
	baseName, baseDigest := m.Annotations[specsv1.AnnotationBaseImageName], m.Annotations[specsv1.AnnotationBaseImageDigest]
	if baseDigest == "" {
		return baseEvidence{Unseen: "the image names no base (" + specsv1.AnnotationBaseImageDigest + ")"}, nil
	}
	nref, err := name.ParseReference(baseName, name.WeakValidation)
	if err != nil {
		return baseEvidence{Unseen: fmt.Sprintf("its base %q is no registry reference", baseName)}, nil
	}
	pinned := nref.Context().String() + "@" + baseDigest
	ref, err := imageref.Parse(pinned, opts.Insecure)
	if err != nil {
		return baseEvidence{}, fmt.Errorf("base %s: %w", pinned, err)
	}
	art, err := registry.Read(ctx, ref, opts)
	if err != nil {
		return baseEvidence{Unseen: fmt.Sprintf("its base %s cannot be read: %v", pinned, registry.Explain(err))}, nil
	}
	images := []v1.Image{art.Image}
	if art.Image == nil {
		images = nil
		im, err := art.Index.IndexManifest()
		if err != nil {
			return baseEvidence{}, fmt.Errorf("base %s: %w", pinned, err)
		}
		for _, d := range im.Manifests {
			if d.Platform == nil || d.Platform.OS != "windows" || d.Platform.Architecture != want.Architecture {
				continue
			}
			bi, err := art.Index.Image(d.Digest)
			if err != nil {
				return baseEvidence{}, fmt.Errorf("base %s: %w", pinned, registry.Explain(err))
			}
			images = append(images, bi)
		}
	}
	for _, bi := range images {
		bcf, err := bi.ConfigFile()
		if err != nil {
			return baseEvidence{}, fmt.Errorf("base %s: config: %w", pinned, registry.Explain(err))
		}
		if isPrefix(bcf.RootFS.DiffIDs, cf.RootFS.DiffIDs) {
			return baseEvidence{Ref: pinned, OSVersion: bcf.OSVersion}, nil
		}
	}
	return baseEvidence{}, fmt.Errorf("its annotation %s names %s, whose layers are not the image's first layers: no evidence of its build; name the true base or drop the annotation", specsv1.AnnotationBaseImageDigest, pinned)
}

// isPrefix reports whether base's layers are the first of img's.
func isPrefix(base, img []v1.Hash) bool {
	return len(base) > 0 && len(base) <= len(img) && slices.Equal(base, img[:len(base)])
}

// sameBuild reports whether two Windows OS versions name one build
// (10.0.20348 and 10.0.20348.2340 do).
func sameBuild(a, b string) bool {
	ba, oka := platform.OSBuild(a)
	bb, okb := platform.OSBuild(b)
	return oka && okb && ba == bb
}

// listedAs reports whether a source index's entry platform names the image
// whose config says cfg: the same os/arch/variant and, where both name an
// os.version, the same build.
func listedAs(listed, cfg v1.Platform) bool {
	l, c := platform.Normalize(listed), platform.Normalize(cfg)
	if l.OS != c.OS || l.Architecture != c.Architecture || l.Variant != c.Variant {
		return false
	}
	return l.OSVersion == "" || c.OSVersion == "" || sameBuild(l.OSVersion, c.OSVersion)
}
