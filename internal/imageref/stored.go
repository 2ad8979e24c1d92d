package imageref

import (
	"io"
	"path/filepath"
	"sync"

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
// them). Images of different digests are fetched at once; readers of one
// digest wait for its one fetch, and a failed fetch is not remembered.
type storedIndex struct {
	idx     v1.ImageIndex
	st      *store
	mu      sync.Mutex
	images  map[v1.Hash]*pendingImage
	indexes map[v1.Hash]*storedIndex
}

// pendingImage is one digest's image; done is closed once img or err is set.
type pendingImage struct {
	done chan struct{}
	img  *storedImage
	err  error
}

func newStoredIndex(idx v1.ImageIndex, st *store) *storedIndex {
	return &storedIndex{idx: idx, st: st, images: map[v1.Hash]*pendingImage{}, indexes: map[v1.Hash]*storedIndex{}}
}

var _ v1.ImageIndex = (*storedIndex)(nil)

func (i *storedIndex) MediaType() (types.MediaType, error)       { return i.idx.MediaType() }
func (i *storedIndex) Digest() (v1.Hash, error)                  { return i.idx.Digest() }
func (i *storedIndex) Size() (int64, error)                      { return i.idx.Size() }
func (i *storedIndex) IndexManifest() (*v1.IndexManifest, error) { return i.idx.IndexManifest() }
func (i *storedIndex) RawManifest() ([]byte, error)              { return i.idx.RawManifest() }

func (i *storedIndex) Image(h v1.Hash) (v1.Image, error) {
	i.mu.Lock()
	p, ok := i.images[h]
	if !ok {
		p = &pendingImage{done: make(chan struct{})}
		i.images[h] = p
	}
	i.mu.Unlock()
	if ok {
		<-p.done
		if p.err != nil {
			return nil, p.err
		}
		return p.img, nil
	}
	img, err := i.idx.Image(h)
	if err != nil {
		p.err = err
		i.mu.Lock()
		delete(i.images, h) // the next reader tries again
		i.mu.Unlock()
	} else {
		p.img = &storedImage{Image: img, st: i.st}
	}
	close(p.done)
	if err != nil {
		return nil, err
	}
	return p.img, nil
}

func (i *storedIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if idx, ok := i.indexes[h]; ok {
		return idx, nil
	}
	idx, err := i.idx.ImageIndex(h)
	if err != nil {
		return nil, err
	}
	i.indexes[h] = newStoredIndex(idx, i.st)
	return i.indexes[h], nil
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
	// partial detects gzip, zstd or plain tar from the stored bytes.
	inflated, err := partial.CompressedToLayer(compressedOnly{l})
	if err != nil {
		return nil, err
	}
	return inflated.Uncompressed()
}

// Descriptor keeps the source's descriptor (annotations, URLs) for pushes.
func (l *storedLayer) Descriptor() (*v1.Descriptor, error) { return partial.Descriptor(l.Layer) }

// compressedOnly hides every method of a storedLayer but partial.CompressedLayer's.
type compressedOnly struct{ l *storedLayer }

func (c compressedOnly) Digest() (v1.Hash, error)            { return c.l.Digest() }
func (c compressedOnly) Compressed() (io.ReadCloser, error)  { return c.l.Compressed() }
func (c compressedOnly) Size() (int64, error)                { return c.l.Size() }
func (c compressedOnly) MediaType() (types.MediaType, error) { return c.l.MediaType() }
