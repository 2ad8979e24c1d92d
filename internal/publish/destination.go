package publish

import (
	"context"
	"log/slog"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Destination is where a release's images go: an OCI layout (Layout), an
// OCI layout tar (Archive) or a registry (Registry, ByDigest). The release
// calls its Hooks while it builds, then Publish once every image is built
// and checked.
//
// Each implementation also names what it published, for reports, with the
// same four methods (Reference, Pinned, IndexTags, PlatformTag); the
// release, which opened it, asks them.
type Destination interface {
	// Hooks are the calls the release makes while it builds (see Hooks);
	// they use ctx, the run's context, so that connections they open
	// outlive the build and serve Publish.
	Hooks(ctx context.Context) Hooks
	// Publish puts images in place, all or nothing: no entry or tag
	// changes unless every image is in place first.
	Publish(ctx context.Context, images []Image) error
}

// Hooks are what a destination does while the release builds; a nil field
// is a call the destination does not need (and the release then skips the
// work that feeds it, such as streaming layers). The signatures are those
// of build.Options' fields of the same names.
type Hooks struct {
	// Preflight runs before any compile shows or any layer is written
	// (compiles may have started beside it; its error stops them).
	Preflight func(ctx context.Context) error
	// OnImage takes each platform's image (of the release image named
	// image) once it is assembled and checked.
	OnImage func(ctx context.Context, image string, p v1.Platform, img v1.Image) error
	// OnLayer takes a new layer while it is written.
	OnLayer func(ctx context.Context, image string, p v1.Platform, l v1.Layer) error
}

// Layout writes to the OCI layout directory Ref.Path (Ref is oci:DIR).
type Layout struct {
	Ref imageref.Ref
	// Single names entries by tag alone (TAG, not NAME:TAG): the release
	// has one image.
	Single bool
	Logger *slog.Logger
}

// Hooks: a layout takes the images at the end.
func (d *Layout) Hooks(context.Context) Hooks { return Hooks{} }

// Publish writes images with ToLayout.
func (d *Layout) Publish(ctx context.Context, images []Image) error {
	if err := ToLayout(ctx, d.Ref.Path, d.entries(images)); err != nil {
		return err
	}
	logger(d.Logger).Info("written", "output", d.Ref.String())
	return nil
}

// entries are images as the layout names them.
func (d *Layout) entries(images []Image) []Image {
	out := make([]Image, len(images))
	for i, img := range images {
		out[i] = img
		if d.Single {
			out[i].Name = ""
		}
	}
	return out
}

// Reference is oci:DIR:TAG, or oci:DIR:NAME:TAG for a recipe (its first
// entry), usable as is by verify and skopeo; an untagged image is listed
// by its name.
func (d *Layout) Reference(img Image) string {
	switch {
	case len(img.Tags) > 0:
		return d.entry(img, img.Tags[0])
	case !d.Single:
		return d.Ref.String() + ":" + img.Name
	}
	return d.entry(img, "latest")
}

// entry is the layout reference of img's entry tagged tag.
func (d *Layout) entry(img Image, tag string) string {
	if !d.Single {
		tag = img.Name + ":" + tag
	}
	return d.Ref.String() + ":" + tag
}

// Pinned is REFERENCE@DIGEST, which verify (imageref.Parse) reads as the
// entry pinned by its digest.
func (d *Layout) Pinned(img Image, digest v1.Hash) string {
	return d.Reference(img) + "@" + digest.String()
}

// IndexTags are the entries' references (oci:DIR:NAME:TAG).
func (d *Layout) IndexTags(img Image) []string {
	out := []string{}
	for _, t := range img.Tags {
		out = append(out, d.entry(img, t))
	}
	return out
}

// PlatformTag is the entry's reference.
func (d *Layout) PlatformTag(img Image, tag string) string { return d.entry(img, tag) }

// Archive writes an OCI layout tar to Ref.Path (Ref is oci-archive:FILE),
// with file times at Epoch; the layout is built in TempDir first.
type Archive struct {
	Layout
	TempDir string
	Epoch   time.Time
}

// Publish writes images with ToArchive.
func (d *Archive) Publish(ctx context.Context, images []Image) error {
	if err := ToArchive(ctx, d.Ref.Path, d.TempDir, d.Epoch, d.entries(images)); err != nil {
		return err
	}
	logger(d.Logger).Info("written", "output", d.Ref.String())
	return nil
}

// logger is log, or one that discards.
func logger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
