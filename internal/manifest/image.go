package manifest

import (
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Step is one instruction's contribution to the image: a history entry and,
// unless History.EmptyLayer, the layer it added.
type Step struct {
	Layer   v1.Layer
	History v1.History
}

// Spec is everything an image is made of.
type Spec struct {
	Base        v1.Image    // nil for scratch
	Platform    v1.Platform // os/architecture/variant written into the config
	Config      v1.Config   // the runtime config after all instructions
	Steps       []Step
	Annotations map[string]string
	Created     v1.Time
}

// Image assembles the image described by spec.
func Image(spec Spec) (v1.Image, error) {
	cf, layers, err := configFile(spec)
	if err != nil {
		return nil, err
	}
	rawConfig, err := json.Marshal(cf)
	if err != nil {
		return nil, err
	}
	cfgDigest, cfgSize, err := v1.SHA256(bytesReader(rawConfig))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: cfgDigest, Size: cfgSize},
		Annotations:   spec.Annotations,
	}
	w := &withLayers{byDigest: map[v1.Hash]v1.Layer{}, byDiffID: map[v1.Hash]v1.Layer{}}
	if w.baseURLs, err = layerURLs(spec.Base); err != nil {
		return nil, err
	}
	for _, l := range layers {
		desc, err := w.add(l)
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, desc)
	}
	rawManifest, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	core := &image{config: rawConfig, manifest: rawManifest, layers: w.byDigest}
	if w.Image, err = partial.CompressedToImage(core); err != nil {
		return nil, err
	}
	return w, nil
}

// configFile is the config of the image spec describes (the base's, with
// spec's platform, runtime config and history added) and its layers, the
// base's first.
func configFile(spec Spec) (*v1.ConfigFile, []v1.Layer, error) {
	cf := &v1.ConfigFile{RootFS: v1.RootFS{Type: "layers"}}
	var layers []v1.Layer
	if spec.Base != nil {
		base, err := spec.Base.ConfigFile()
		if err != nil {
			return nil, nil, fmt.Errorf("base config: %w", err)
		}
		cf = base.DeepCopy()
		if layers, err = spec.Base.Layers(); err != nil {
			return nil, nil, fmt.Errorf("base layers: %w", err)
		}
		if len(layers) != len(cf.RootFS.DiffIDs) {
			return nil, nil, fmt.Errorf("base has %d layers but its config lists %d diff IDs", len(layers), len(cf.RootFS.DiffIDs))
		}
		cf.History = fillHistory(cf.History, len(layers), cf.Created)
	}
	cf.Created = spec.Created
	cf.OS = spec.Platform.OS
	cf.Architecture = spec.Platform.Architecture
	cf.Variant = spec.Platform.Variant
	cf.Config = spec.Config
	cf.Container = ""
	cf.DockerVersion = ""
	for _, s := range spec.Steps {
		h := s.History
		h.Created = spec.Created
		h.EmptyLayer = s.Layer == nil
		cf.History = append(cf.History, h)
		if s.Layer == nil {
			continue
		}
		diffID, err := s.Layer.DiffID()
		if err != nil {
			return nil, nil, err
		}
		cf.RootFS.DiffIDs = append(cf.RootFS.DiffIDs, diffID)
		layers = append(layers, s.Layer)
	}
	return cf, layers, nil
}

// withLayers hands out the layers themselves rather than partial's
// wrappers, so a base layer read from a registry stays a
// *remote.MountableLayer and a push mounts it instead of uploading it.
type withLayers struct {
	v1.Image
	ordered            []v1.Layer
	byDigest, byDiffID map[v1.Hash]v1.Layer
	baseURLs           map[v1.Hash][]string // the base manifest's layer URLs
}

// layerURLs is the URLs the manifest of base lists per layer digest (those
// of foreign layers); nil for scratch.
func layerURLs(base v1.Image) (map[v1.Hash][]string, error) {
	if base == nil {
		return nil, nil
	}
	m, err := base.Manifest()
	if err != nil {
		return nil, fmt.Errorf("base manifest: %w", err)
	}
	out := map[v1.Hash][]string{}
	for _, d := range m.Layers {
		if len(d.URLs) > 0 {
			out[d.Digest] = d.URLs
		}
	}
	return out, nil
}

var _ v1.Image = (*withLayers)(nil)

// add records l, with its OCI media type, as the image's next layer and
// returns its manifest descriptor.
func (w *withLayers) add(l v1.Layer) (v1.Descriptor, error) {
	d, err := l.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := l.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := l.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	oci, err := ociLayerType(mt)
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("layer %s: %w", d, err)
	}
	desc := v1.Descriptor{MediaType: oci, Digest: d, Size: size}
	if !oci.IsDistributable() {
		// A foreign layer (Windows base images) is referenced, never copied:
		// a runtime fetches it from its URLs.
		desc.URLs = w.baseURLs[d]
		if desc.URLs == nil {
			src, err := partial.Descriptor(l)
			if err != nil {
				return v1.Descriptor{}, fmt.Errorf("foreign layer %s: %w", d, err)
			}
			desc.URLs = src.URLs
		}
	}
	wrapped := asOCI(l, oci)
	w.byDigest[d] = wrapped
	w.ordered = append(w.ordered, wrapped)
	if diffID, err := l.DiffID(); err == nil {
		w.byDiffID[diffID] = wrapped
	}
	return desc, nil
}

func (w *withLayers) Layers() ([]v1.Layer, error) { return append([]v1.Layer(nil), w.ordered...), nil }

func (w *withLayers) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	if l, ok := w.byDigest[h]; ok {
		return l, nil
	}
	return w.Image.LayerByDigest(h) // the config blob
}

func (w *withLayers) LayerByDiffID(h v1.Hash) (v1.Layer, error) {
	if l, ok := w.byDiffID[h]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("image has no layer with diff ID %s", h)
}

// fillHistory gives every base layer a history entry, as BuildKit does for
// bases whose history is missing or short: entries for the first layers
// are added in front, so the non-empty entries and the layers pair up and
// tools can tell the base's layers from ours.
func fillHistory(history []v1.History, layers int, created v1.Time) []v1.History {
	nonEmpty := 0
	for _, h := range history {
		if !h.EmptyLayer {
			nonEmpty++
		}
	}
	if nonEmpty >= layers {
		return history
	}
	missing := make([]v1.History, layers-nonEmpty)
	for i := range missing {
		missing[i] = v1.History{Created: created, Comment: "base layer without history"}
	}
	return append(missing, history...)
}

// ociLayerType maps a layer media type onto its OCI equivalent; a Docker
// foreign layer becomes OCI's non-distributable one.
func ociLayerType(mt types.MediaType) (types.MediaType, error) {
	switch mt {
	case types.OCILayer, types.DockerLayer:
		return types.OCILayer, nil
	case types.OCIUncompressedLayer, types.DockerUncompressedLayer:
		return types.OCIUncompressedLayer, nil
	case types.OCILayerZStd:
		return mt, nil
	case types.OCIRestrictedLayer, types.DockerForeignLayer:
		return types.OCIRestrictedLayer, nil
	case types.OCIUncompressedRestrictedLayer:
		return mt, nil
	}
	return "", fmt.Errorf("unknown layer media type %s", mt)
}

// image is a fully computed image: manifest and config bytes are fixed.
type image struct {
	config, manifest []byte
	layers           map[v1.Hash]v1.Layer
}

var _ partial.CompressedImageCore = (*image)(nil)

func (i *image) RawConfigFile() ([]byte, error)      { return i.config, nil }
func (i *image) RawManifest() ([]byte, error)        { return i.manifest, nil }
func (i *image) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (i *image) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if l, ok := i.layers[h]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("image has no layer %s", h)
}
