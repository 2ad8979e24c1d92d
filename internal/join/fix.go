package join

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fix replaces e's config by one that names p, every other field of the
// config kept as it was, and the manifest by one that names the new config,
// every other field kept. The layers are the source's. Attestations and
// referrers about the old manifest cannot be about the new one (their
// subject, and a signature's payload, is the old digest): they are dropped.
func (e *Entry) fix(p v1.Platform) error {
	raw, err := e.Image.RawConfigFile()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	set := func(k, v string) {
		if v == "" {
			delete(fields, k)
			return
		}
		b, _ := json.Marshal(v)
		fields[k] = b
	}
	set("os", p.OS)
	set("architecture", p.Architecture)
	set("variant", p.Variant)
	set("os.version", p.OSVersion)
	newRaw, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	img, err := withConfig(e.Image, newRaw)
	if err != nil {
		return err
	}
	e.Image, e.Platform, e.Fixed = img, p, true
	e.Dropped = len(e.Attestations) + len(e.Referrers) + len(e.Tagged)
	e.Attestations, e.Referrers, e.Tagged = nil, nil, nil
	return nil
}

// fixedImage is a source image with another config: its manifest differs
// from the source's in the config descriptor's digest and size alone.
type fixedImage struct {
	base      v1.Image
	config    []byte
	configH   v1.Hash
	manifest  []byte
	mediaType types.MediaType
}

var _ partial.CompressedImageCore = (*fixedImage)(nil)

func withConfig(base v1.Image, config []byte) (v1.Image, error) {
	rawM, err := base.RawManifest()
	if err != nil {
		return nil, err
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, err
	}
	h, n, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(rawM, &fields); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	desc := map[string]json.RawMessage{}
	if err := json.Unmarshal(fields["config"], &desc); err != nil {
		return nil, fmt.Errorf("manifest's config descriptor: %w", err)
	}
	desc["digest"], _ = json.Marshal(h.String())
	desc["size"], _ = json.Marshal(n)
	if fields["config"], err = json.Marshal(desc); err != nil {
		return nil, err
	}
	m, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&fixedImage{base: base, config: config, configH: h, manifest: m, mediaType: mt})
}

func (f *fixedImage) RawConfigFile() ([]byte, error)      { return f.config, nil }
func (f *fixedImage) MediaType() (types.MediaType, error) { return f.mediaType, nil }
func (f *fixedImage) RawManifest() ([]byte, error)        { return f.manifest, nil }

// LayerByDigest serves the new config itself and the source's layers from
// the source (mountable where the source's are).
func (f *fixedImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h == f.configH {
		m, err := partial.Manifest(f)
		if err != nil {
			return nil, err
		}
		return static.NewLayer(f.config, m.Config.MediaType), nil
	}
	return f.base.LayerByDigest(h)
}
