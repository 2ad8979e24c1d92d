package imageref

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// Artifact is a resolved reference: exactly one of Index and Image is set,
// except for scratch, where both are nil.
type Artifact struct {
	Ref    Ref
	Digest v1.Hash
	Index  v1.ImageIndex
	Image  v1.Image
	// RefName is, for a layout or archive, the chosen entry's
	// org.opencontainers.image.ref.name ("" when it has none).
	RefName string
}

// Name is how a release records the artifact as a base, in its images'
// org.opencontainers.image.base.name and its attestations: a registry
// reference as written; for a layout or archive, whose path is a host's
// and would make the record differ from one directory or machine to the
// next, the entry's org.opencontainers.image.ref.name, else its digest.
func (a *Artifact) Name() string {
	switch {
	case a.Ref.Transport != Layout && a.Ref.Transport != Archive:
		return a.Ref.String()
	case a.RefName != "":
		return a.RefName
	}
	return a.Digest.String()
}

// Pinned returns the reference with its digest, e.g. "reg/repo@sha256:..."
// for a registry; layouts and archives keep their path.
func (a *Artifact) Pinned() string {
	if a.Ref.Transport == Registry {
		return a.Ref.Name.Context().Digest(a.Digest.String()).String()
	}
	return a.Ref.String()
}

// Read resolves a layout, archive or scratch reference once and returns
// what it points at; its layers read through opts.Blobs when that is set.
// A registry reference is internal/registry's to read (registry.Read),
// which hands what it fetched to FromRegistry.
func Read(ctx context.Context, ref Ref, opts Options) (*Artifact, error) {
	switch ref.Transport {
	case Scratch:
		return &Artifact{Ref: ref}, nil
	case Registry:
		return nil, fmt.Errorf("%s: a registry reference: internal/registry reads those (registry.Read)", ref)
	case Layout:
		return readLayout(ref, ref.Path, opts.Blobs)
	case Archive:
		if opts.TempDir == "" {
			return nil, fmt.Errorf("%s: no temporary directory to unpack the archive into", ref)
		}
		dir, err := os.MkdirTemp(opts.TempDir, "oci-archive-")
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(ref.Path); errors.Is(err, fs.ErrNotExist) {
			return nil, MarkNotFound(fmt.Errorf("%s: no such archive: %s does not exist", ref, ref.Path))
		}
		if err := extractArchive(ctx, ref.Path, dir); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		return readLayout(ref, dir, opts.Blobs)
	}
	return nil, fmt.Errorf("%s: unknown transport", ref)
}

// FromRegistry is the artifact a registry served for ref (desc, as
// go-containerregistry's remote.Get returns it); its layers read through
// blobs when that is set.
func FromRegistry(ref Ref, desc *remote.Descriptor, blobs *Blobs) (*Artifact, error) {
	a := &Artifact{Ref: ref, Digest: desc.Digest}
	var err error
	switch {
	case desc.MediaType.IsIndex():
		a.Index, err = desc.ImageIndex()
	case desc.MediaType.IsImage():
		a.Image, err = desc.Image()
	default:
		return nil, fmt.Errorf("%s: %s is not an image or an image index", ref, desc.MediaType)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	a.through(blobs, "")
	return a, nil
}

// FromIndex is the artifact for ref that is the index idx of digest d (a
// registry's, read as internal/registry chose); its layers read through
// blobs when that is set.
func FromIndex(ref Ref, d v1.Hash, idx v1.ImageIndex, blobs *Blobs) *Artifact {
	a := &Artifact{Ref: ref, Digest: d, Index: idx}
	a.through(blobs, "")
	return a
}

func readLayout(ref Ref, dir string, blobs *Blobs) (*Artifact, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, MarkNotFound(fmt.Errorf("%s: no such layout: %s does not exist", ref, dir))
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: not an OCI layout: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	var chosen *v1.Descriptor
	var names []string
	for i, d := range im.Manifests {
		n := d.Annotations[specsv1.AnnotationRefName]
		names = append(names, n)
		switch {
		case ref.Tag != "" && n == ref.Tag,
			ref.Tag == "" && ref.Digest != (v1.Hash{}) && d.Digest == ref.Digest,
			ref.Tag == "" && ref.Digest == (v1.Hash{}) && len(im.Manifests) == 1:
			chosen = &im.Manifests[i]
		}
	}
	if chosen != nil && ref.Digest != (v1.Hash{}) && chosen.Digest != ref.Digest {
		return nil, fmt.Errorf("%s: entry %q is %s, not the pinned digest; the layout was rewritten since", ref, ref.Tag, chosen.Digest)
	}
	if chosen == nil {
		if ref.Tag == "" && ref.Digest != (v1.Hash{}) {
			return nil, notFound{fmt.Errorf("%s: no entry with digest %s in the layout (it has %q)", ref, ref.Digest, names)}
		}
		if ref.Tag == "" {
			return nil, fmt.Errorf("%s: the layout holds %d entries %q; name one as %s:TAG", ref, len(im.Manifests), names, ref)
		}
		return nil, notFound{fmt.Errorf("%s: no entry named %q in the layout (it has %q)", ref, ref.Tag, names)}
	}
	a := &Artifact{Ref: ref, Digest: chosen.Digest, RefName: chosen.Annotations[specsv1.AnnotationRefName]}
	switch {
	case chosen.MediaType.IsIndex():
		a.Index, err = idx.ImageIndex(chosen.Digest)
	case chosen.MediaType.IsImage():
		a.Image, err = idx.Image(chosen.Digest)
	default:
		return nil, fmt.Errorf("%s: entry %s is %s, not an image", ref, chosen.Digest, chosen.MediaType)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	a.through(blobs, dir)
	return a, nil
}
