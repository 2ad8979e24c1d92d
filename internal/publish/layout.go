package publish

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// ToLayout writes images into the OCI layout at dir, creating it if needed.
// Each tag becomes an index.json entry named TAG (single-image release) or
// NAME:TAG; an entry of the same name is replaced.
func ToLayout(ctx context.Context, dir string, images []Image) error {
	p, err := openLayout(dir)
	if err != nil {
		return err
	}
	for _, img := range images {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.WriteIndex(img.Index); err != nil {
			return fmt.Errorf("layout %s: %w", dir, err)
		}
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
		if err := p.ReplaceIndex(img.Index, match.Annotation(specsv1.AnnotationRefName, ref),
			layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: ref})); err != nil {
			return fmt.Errorf("layout %s: entry %s: %w", dir, ref, err)
		}
	}
	for _, t := range tagOrder(images) {
		img := images[t.image]
		ref := t.tag
		if img.Name != "" {
			ref = img.Name + ":" + t.tag
		}
		ann := layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: ref})
		matcher := match.Annotation(specsv1.AnnotationRefName, ref)
		if t.platform {
			child, err := img.Index.Image(t.digest)
			if err != nil {
				return err
			}
			err = p.ReplaceImage(child, matcher, ann)
		} else {
			err = p.ReplaceIndex(img.Index, matcher, ann)
		}
		if err != nil {
			return fmt.Errorf("layout %s: entry %s: %w", dir, ref, err)
		}
	}
	return nil
}

func openLayout(dir string) (layout.Path, error) {
	if _, err := os.Stat(dir + "/" + specsv1.ImageIndexFile); err == nil {
		p, err := layout.FromPath(dir)
		if err != nil {
			return "", fmt.Errorf("layout %s: %w", dir, err)
		}
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("output %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return "", fmt.Errorf("output %s: %w", dir, err)
	}
	return p, nil
}
