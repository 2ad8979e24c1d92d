package imageref

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
)

// Describe is the descriptor of m with its media type, digest and size
// only: what an index, a layout's index.json or a manifest's layer list
// names it by. It is not partial.Descriptor, which would carry a remote
// descriptor's platform and annotations along; a caller adds what its
// entry needs (a platform, annotations).
func Describe(m partial.Describable) (v1.Descriptor, error) {
	mt, err := m.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	d, err := m.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := m.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: size}, nil
}
