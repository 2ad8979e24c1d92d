package publish

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// ByDigest is one CI job's share of a fanned-out release (push
// --by-digest): it sends the blobs and per-platform manifests of the
// platforms it built to the registry as Registry does, with the same early
// uploads while the release builds, checks every manifest is there, writes
// no tag and no index, and writes the part file that merge reads.
type ByDigest struct {
	*Registry
	// PartFile is where the part goes.
	PartFile string
	// Part holds the release's fields (version, revision, epoch, recipe,
	// platforms, job); Publish adds the images.
	Part part.File
	// ImagePlatforms are the platforms of the images that build only some
	// of the release's (the recipe's images[].platforms), by image name.
	ImagePlatforms map[string][]string
	// Contracts are the GitLab image contracts the recipe names, by image
	// name.
	Contracts map[string]string
}

// Publish pushes every platform manifest of images by digest (blobs the
// hooks sent are found in place), checks each with a HEAD, then writes the
// part file. It writes no tag.
func (d *ByDigest) Publish(ctx context.Context, images []Image) error {
	var out []Image
	for _, img := range images {
		if len(img.Referrers) > 0 {
			// A job writes no tag, and without the referrers API a
			// referrer needs its fallback tag: merge could not carry them.
			return fmt.Errorf("image %s: a by-digest push cannot carry referrers; attest in the index (--attest index)", img.Name)
		}
		out = append(out, d.naming.split(img)...)
	}
	if err := PushByDigest(ctx, out, d.registryOptions()); err != nil {
		return err
	}
	f := d.Part
	f.Images = nil
	if len(f.Platforms) == 0 && len(out) > 0 {
		// Config-free without --platforms: the base's, as built.
		im, err := out[0].Index.IndexManifest()
		if err != nil {
			return err
		}
		for _, m := range im.Manifests {
			if attestspec.IsPlatformImage(m) { // not its attestations (unknown/unknown)
				f.Platforms = append(f.Platforms, platform.Format(*m.Platform))
			}
		}
	}
	for _, img := range out {
		pi, err := partImage(img)
		if err != nil {
			return err
		}
		pi.Platforms, pi.Contract = d.ImagePlatforms[img.Name], d.Contracts[img.Name]
		f.Images = append(f.Images, pi)
	}
	data, err := part.Marshal(&f)
	if err != nil {
		return err
	}
	// Beside it first, then renamed: a reader never sees half a part.
	if err := outfile.WriteBytes(d.PartFile, data); err != nil {
		return fmt.Errorf("part file: %w", err)
	}
	logger(d.log).Info("part written", "file", d.PartFile, "images", len(f.Images))
	return nil
}

// partImage is img as a part records it.
func partImage(img Image) (part.Image, error) {
	im, err := img.Index.IndexManifest()
	if err != nil {
		return part.Image{}, err
	}
	pi := part.Image{
		Name: img.Name, Repository: img.Repository.String(),
		Annotations: im.Annotations, Tags: append([]string{}, img.Tags...),
		PlatformTags: []part.PlatformTag{}, Manifests: im.Manifests,
	}
	for _, t := range img.PlatformTags {
		var p string
		for _, m := range im.Manifests {
			if m.Digest == t.Manifest && m.Platform != nil {
				p = platform.Format(*m.Platform)
			}
		}
		pi.PlatformTags = append(pi.PlatformTags, part.PlatformTag{Platform: p, Digest: t.Manifest, Tag: t.Tag})
	}
	return pi, nil
}

// Pinned says the image went up by digest, untagged, and where its part is.
func (d *ByDigest) Pinned(img Image, _ v1.Hash) string {
	return d.Reference(img) + " (by digest, no tag; part file " + d.PartFile + ")"
}

// IndexTags is empty: merge writes them.
func (d *ByDigest) IndexTags(Image) []string { return nil }
