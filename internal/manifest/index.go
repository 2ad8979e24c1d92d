package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/platform"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// Entry is one platform's image in an index.
type Entry struct {
	Platform v1.Platform
	Image    v1.Image
}

// Attachment is a manifest an index lists after its platform images, with
// the entry given as is (BuildKit's attestation manifests: platform
// unknown/unknown, vnd.docker.reference.* annotations).
type Attachment struct {
	Entry v1.Descriptor
	Image v1.Image
}

// Index assembles an OCI image index over entries, in their order, then
// attachments, in theirs.
func Index(entries []Entry, annotations map[string]string, attachments ...Attachment) (v1.ImageIndex, error) {
	var descs []v1.Descriptor
	children := map[v1.Hash]v1.Image{}
	for _, e := range entries {
		d, err := e.Image.Digest()
		if err != nil {
			return nil, err
		}
		size, err := e.Image.Size()
		if err != nil {
			return nil, err
		}
		mt, err := e.Image.MediaType()
		if err != nil {
			return nil, err
		}
		p, err := entryPlatform(e)
		if err != nil {
			return nil, err
		}
		descs = append(descs, v1.Descriptor{MediaType: mt, Digest: d, Size: size, Platform: &p})
		children[d] = e.Image
	}
	for _, a := range attachments {
		descs = append(descs, a.Entry)
		children[a.Entry.Digest] = a.Image
	}
	return IndexOf(descs, annotations, func(h v1.Hash) (v1.Image, error) {
		if img, ok := children[h]; ok {
			return img, nil
		}
		return nil, fmt.Errorf("index has no image %s", h)
	})
}

// IndexOf assembles an OCI image index listing descs, in their order, with
// annotations; image gives the image of an entry by digest (merge reads
// them from a registry). Index and IndexOf write the same bytes for the
// same entries.
func IndexOf(descs []v1.Descriptor, annotations map[string]string, image func(v1.Hash) (v1.Image, error)) (v1.ImageIndex, error) {
	im := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     descs,
		Annotations:   annotations,
	}
	raw, err := json.Marshal(im)
	if err != nil {
		return nil, err
	}
	digest, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return &index{raw: raw, manifest: im, digest: digest, size: size, image: image}, nil
}

// index is a computed image index whose children are images.
type index struct {
	raw      []byte
	manifest v1.IndexManifest
	digest   v1.Hash
	size     int64
	image    func(v1.Hash) (v1.Image, error)
}

var _ v1.ImageIndex = (*index)(nil)

func (x *index) MediaType() (types.MediaType, error) { return types.OCIImageIndex, nil }
func (x *index) Digest() (v1.Hash, error)            { return x.digest, nil }
func (x *index) Size() (int64, error)                { return x.size, nil }
func (x *index) RawManifest() ([]byte, error)        { return x.raw, nil }
func (x *index) IndexManifest() (*v1.IndexManifest, error) {
	return x.manifest.DeepCopy(), nil
}

func (x *index) Image(h v1.Hash) (v1.Image, error) {
	return x.image(h)
}

func (x *index) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("index has no nested index %s", h)
}

// entryPlatform is the platform an index lists for e: os, architecture and
// variant as given and, for a Windows image, the os.version of its config
// (what a Windows node matches its build against). A Windows image whose
// config has no os.version, or one of another build than e.Platform names,
// is an error naming both.
func entryPlatform(e Entry) (v1.Platform, error) {
	p := v1.Platform{OS: e.Platform.OS, Architecture: e.Platform.Architecture, Variant: e.Platform.Variant}
	if p.OS != "windows" {
		return p, nil
	}
	cf, err := e.Image.ConfigFile()
	if err != nil {
		return v1.Platform{}, fmt.Errorf("entry for %s: config: %w", platform.Format(e.Platform), err)
	}
	if cf.OSVersion == "" {
		return v1.Platform{}, fmt.Errorf("entry for %s: its config has no os.version, so no Windows node could tell whether it runs it; use a Windows base whose config names its build", platform.Format(e.Platform))
	}
	p.OSVersion = cf.OSVersion
	if !platform.Satisfies(p, e.Platform) {
		return v1.Platform{}, fmt.Errorf("entry for %s: its config says os.version %s, another Windows build", platform.Format(e.Platform), cf.OSVersion)
	}
	return p, nil
}
