package publish

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// ToLayout writes images into the OCI layout at dir, creating it if needed.
// Each tag becomes an index.json entry named TAG (single-image release) or
// NAME:TAG; an entry of the same name is replaced. Entries carry media
// type, digest, size and the name, never an artifactType (see
// layoutDir). index.json is replaced in one rename once every blob is in
// place, so a failed or interrupted run leaves the entries as they were.
func ToLayout(ctx context.Context, dir string, images []Image) error {
	for _, img := range images {
		if len(img.Referrers) > 0 {
			return fmt.Errorf("layout %s: an OCI layout holds no referrers; publish the attestations in the image index with --attest index", dir)
		}
	}
	l, err := openLayout(dir)
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	for _, img := range images {
		if err := l.addIndex(img.Index); err != nil {
			return fmt.Errorf("layout %s: %w", dir, err)
		}
	}
	if err := l.writeBlobs(ctx); err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	// An image without any tag is still listed, named by the image alone,
	// so nothing written is unreachable.
	for _, img := range images {
		if len(img.Tags) > 0 || len(img.PlatformTags) > 0 {
			continue
		}
		ref := img.Name
		if ref == "" {
			ref = "latest"
		}
		desc, err := imageref.Describe(img.Index)
		if err != nil {
			return err
		}
		l.setEntry(ref, desc)
	}
	for _, t := range tagOrder(images) {
		img := images[t.image]
		ref := t.tag
		if img.Name != "" {
			ref = img.Name + ":" + t.tag
		}
		var desc v1.Descriptor
		var err error
		if t.platform {
			child, cerr := img.Index.Image(t.digest)
			if cerr != nil {
				return cerr
			}
			desc, err = imageref.Describe(child)
		} else {
			desc, err = imageref.Describe(img.Index)
		}
		if err != nil {
			return fmt.Errorf("layout %s: entry %s: %w", dir, ref, err)
		}
		l.setEntry(ref, desc)
	}
	return l.commit()
}
