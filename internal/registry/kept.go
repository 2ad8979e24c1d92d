package registry

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// keptIndex is a registry's image index whose images' manifests and
// configs are read through a kept blob store (imageref.KeepBlobs): a run
// asks the registry only for the index (its tag may move) and for what no
// earlier run fetched; manifests and configs are content-addressed, so
// what is kept under a digest is what the registry would send. Each call
// of Image makes a new image: imageref's stored index, which Read wraps
// around it, asks once per digest.
type keptIndex struct {
	registryIndex // the registry's: everything but Image (nested indexes too)
	repo          name.Repository
	blobs         *imageref.Blobs
	opts          []remote.Option // the index's read: its puller reused
}

// registryIndex names the embedded index so that its field is not called
// ImageIndex, which would hide the method of that name.
type registryIndex = v1.ImageIndex

var _ v1.ImageIndex = (*keptIndex)(nil)

func (k *keptIndex) Image(h v1.Hash) (v1.Image, error) {
	desc, err := k.child(h)
	if err != nil {
		return nil, err
	}
	raw, err := k.blobs.Small(h, func() ([]byte, error) {
		img, err := k.registryIndex.Image(h)
		if err != nil {
			return nil, err
		}
		return img.RawManifest()
	})
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", h, err)
	}
	return &keptImage{index: k, digest: h, mediaType: desc.MediaType, raw: raw, manifest: m}, nil
}

// child is the index's entry for h.
func (k *keptIndex) child(h v1.Hash) (v1.Descriptor, error) {
	im, err := k.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	for _, d := range im.Manifests {
		if d.Digest == h {
			return d, nil
		}
	}
	return v1.Descriptor{}, fmt.Errorf("index %s has no manifest %s", k.repo, h)
}

// blob opens blob d of the index's repository; go-containerregistry
// checks it against d as it is read.
func (k *keptIndex) blob(d v1.Hash) (io.ReadCloser, error) {
	l, err := remote.Layer(k.repo.Digest(d.String()), k.opts...)
	if err != nil {
		return nil, err
	}
	return l.Compressed()
}

// keptImage is one image of a keptIndex: manifest and config from the
// store, layers fetched when read (through the run's store, see
// imageref.Blobs) and mountable from the base's repository, like
// go-containerregistry's own.
type keptImage struct {
	index     *keptIndex
	digest    v1.Hash
	mediaType types.MediaType
	raw       []byte
	manifest  *v1.Manifest

	configOnce sync.Once
	config     []byte
	configErr  error
}

var _ v1.Image = (*keptImage)(nil)

func (i *keptImage) MediaType() (types.MediaType, error) {
	if i.manifest.MediaType != "" {
		return i.manifest.MediaType, nil
	}
	return i.mediaType, nil
}
func (i *keptImage) Size() (int64, error)                { return int64(len(i.raw)), nil }
func (i *keptImage) Digest() (v1.Hash, error)            { return i.digest, nil }
func (i *keptImage) RawManifest() ([]byte, error)        { return i.raw, nil }
func (i *keptImage) Manifest() (*v1.Manifest, error)     { return i.manifest.DeepCopy(), nil }
func (i *keptImage) ConfigName() (v1.Hash, error)        { return i.manifest.Config.Digest, nil }
func (i *keptImage) ConfigFile() (*v1.ConfigFile, error) { return partial.ConfigFile(i) }

func (i *keptImage) RawConfigFile() ([]byte, error) {
	i.configOnce.Do(func() {
		d := i.manifest.Config.Digest
		i.config, i.configErr = i.index.blobs.Small(d, func() ([]byte, error) {
			rc, err := i.index.blob(d)
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		})
		if i.configErr != nil {
			i.configErr = fmt.Errorf("config %s: %w", d, i.configErr)
		}
	})
	return i.config, i.configErr
}

func (i *keptImage) Layers() ([]v1.Layer, error) {
	out := make([]v1.Layer, 0, len(i.manifest.Layers))
	for _, d := range i.manifest.Layers {
		l, err := i.LayerByDigest(d.Digest)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

func (i *keptImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	for n, d := range i.manifest.Layers {
		if d.Digest == h {
			l := &keptLayer{image: i, n: n, desc: d}
			// Mounted from the image's repository, named as ggcr names it.
			return &remote.MountableLayer{Layer: l, Reference: i.index.repo.Digest(i.digest.String())}, nil
		}
	}
	return nil, fmt.Errorf("image %s has no layer %s", i.digest, h)
}

func (i *keptImage) LayerByDiffID(h v1.Hash) (v1.Layer, error) {
	d, err := partial.DiffIDToBlob(i, h)
	if err != nil {
		return nil, err
	}
	return i.LayerByDigest(d)
}

// keptLayer is layer n of a keptImage: digest, size and media type from
// the manifest, DiffID from the config, bytes fetched when read.
type keptLayer struct {
	image *keptImage
	n     int
	desc  v1.Descriptor
}

var _ v1.Layer = (*keptLayer)(nil)

func (l *keptLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *keptLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *keptLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }
func (l *keptLayer) Compressed() (io.ReadCloser, error)  { return l.image.index.blob(l.desc.Digest) }

func (l *keptLayer) DiffID() (v1.Hash, error) {
	cf, err := l.image.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	if l.n >= len(cf.RootFS.DiffIDs) {
		return v1.Hash{}, fmt.Errorf("image %s: config lists %d layers, the manifest more", l.image.digest, len(cf.RootFS.DiffIDs))
	}
	return cf.RootFS.DiffIDs[l.n], nil
}

func (l *keptLayer) Uncompressed() (io.ReadCloser, error) {
	// partial detects gzip, zstd or plain tar from the bytes; the struct
	// shows it only the compressed side, or it would call this method.
	inflated, err := partial.CompressedToLayer(struct{ partial.CompressedLayer }{l})
	if err != nil {
		return nil, err
	}
	return inflated.Uncompressed()
}

// readKept reads index desc of ref as a keptIndex (see Read).
func readKept(ref imageref.Ref, desc *remote.Descriptor, o imageref.Options, opts []remote.Option) (*imageref.Artifact, error) {
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	k := &keptIndex{registryIndex: idx, repo: ref.Name.Context(), blobs: o.Blobs, opts: opts}
	return imageref.FromIndex(ref, desc.Digest, k, o.Blobs), nil
}
