package imageref

import (
	"io"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// through makes a's images read their layers through blobs. layoutDir is
// the OCI layout the artifact was read from, "" for a registry.
func (a *Artifact) through(blobs *Blobs, layoutDir string) {
	if blobs == nil {
		return
	}
	st := &store{blobs: blobs, layoutDir: layoutDir}
	if a.Index != nil {
		a.Index = newStoredIndex(a.Index, st)
	}
	if a.Image != nil {
		a.Image = &storedImage{Image: a.Image, st: st}
	}
}

// store is a Blobs and where one artifact's blobs live.
type store struct {
	blobs     *Blobs
	layoutDir string
}

// layer returns l reading through the store. A layer that can be mounted
// from its registry stays mountable, so a push still mounts it.
func (st *store) layer(l v1.Layer) v1.Layer {
	if ml, ok := l.(*remote.MountableLayer); ok {
		return &remote.MountableLayer{Layer: &storedLayer{Layer: ml.Layer, st: st}, Reference: ml.Reference}
	}
	return &storedLayer{Layer: l, st: st}
}

// storedIndex hands out its images and child indexes reading through st,
// one object per digest: an image's manifest and config are then fetched
// once however many readers ask for it (go-containerregistry's images keep
// them). Different digests are fetched at once (see memo).
type storedIndex struct {
	idx     v1.ImageIndex
	st      *store
	images  memo[v1.Hash, *storedImage]
	indexes memo[v1.Hash, *storedIndex]
}

func newStoredIndex(idx v1.ImageIndex, st *store) *storedIndex {
	return &storedIndex{idx: idx, st: st}
}

var _ v1.ImageIndex = (*storedIndex)(nil)

func (i *storedIndex) MediaType() (types.MediaType, error)       { return i.idx.MediaType() }
func (i *storedIndex) Digest() (v1.Hash, error)                  { return i.idx.Digest() }
func (i *storedIndex) Size() (int64, error)                      { return i.idx.Size() }
func (i *storedIndex) IndexManifest() (*v1.IndexManifest, error) { return i.idx.IndexManifest() }
func (i *storedIndex) RawManifest() ([]byte, error)              { return i.idx.RawManifest() }

func (i *storedIndex) Image(h v1.Hash) (v1.Image, error) {
	img, err := i.images.get(h, func() (*storedImage, error) {
		img, err := i.idx.Image(h)
		if err != nil {
			return nil, err
		}
		return &storedImage{Image: img, st: i.st}, nil
	})
	if err != nil {
		return nil, err // not a nil *storedImage in a non-nil interface
	}
	return img, nil
}

func (i *storedIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	idx, err := i.indexes.get(h, func() (*storedIndex, error) {
		idx, err := i.idx.ImageIndex(h)
		if err != nil {
			return nil, err
		}
		return newStoredIndex(idx, i.st), nil
	})
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// storedImage hands out its layers reading through st.
type storedImage struct {
	v1.Image
	st *store
}

var _ v1.Image = (*storedImage)(nil)

func (i *storedImage) Layers() ([]v1.Layer, error) {
	ls, err := i.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for n, l := range ls {
		out[n] = i.st.layer(l)
	}
	return out, nil
}

// ConfigLayer is the source's config blob as go-containerregistry gives it:
// a registry's stays mountable (the v1.Image embedded here would hide the
// method), so a push to another repository of that registry mounts it
// instead of uploading it. Configs are small and read with the manifest,
// not through the store.
func (i *storedImage) ConfigLayer() (v1.Layer, error) { return partial.ConfigLayer(i.Image) }

func (i *storedImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := i.Image.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	return i.st.layer(l), nil
}

func (i *storedImage) LayerByDiffID(h v1.Hash) (v1.Layer, error) {
	l, err := i.Image.LayerByDiffID(h)
	if err != nil {
		return nil, err
	}
	return i.st.layer(l), nil
}

// storedLayer is a layer whose bytes come from the store. Digest, DiffID,
// Size and MediaType are the source layer's own (from the manifest and
// config, no fetch); Compressed opens the stored file and Uncompressed
// inflates it.
type storedLayer struct {
	v1.Layer
	st *store
}

var _ v1.Layer = (*storedLayer)(nil)

func (l *storedLayer) Compressed() (io.ReadCloser, error) {
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	if mt, err := l.MediaType(); err == nil && !mt.IsDistributable() {
		return nil, &ForeignLayerError{Digest: d, MediaType: mt}
	}
	size, err := l.Size()
	if err != nil {
		return nil, err
	}
	src := blobSource{fetch: l.Layer.Compressed}
	if l.st.layoutDir != "" {
		src.local = filepath.Join(l.st.layoutDir, "blobs", d.Algorithm, d.Hex)
	}
	return l.st.blobs.open(d, size, src)
}

func (l *storedLayer) Uncompressed() (io.ReadCloser, error) {
	// partial detects gzip, zstd or plain tar from the stored bytes; the
	// struct shows it only the compressed side, or it would call this method.
	inflated, err := partial.CompressedToLayer(struct{ partial.CompressedLayer }{l})
	if err != nil {
		return nil, err
	}
	return inflated.Uncompressed()
}

// Descriptor keeps the source's descriptor (annotations, URLs) for pushes.
func (l *storedLayer) Descriptor() (*v1.Descriptor, error) { return partial.Descriptor(l.Layer) }
