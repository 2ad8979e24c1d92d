package imageref

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ForeignLayerError is a read of a foreign (non-distributable) layer's
// bytes: Windows base images keep their OS layers on Microsoft's servers,
// and helperbuild references them by descriptor and URLs and never fetches
// them. A reader that meets one skips the layer rather than fail.
type ForeignLayerError struct {
	Digest    v1.Hash
	MediaType types.MediaType
}

func (e *ForeignLayerError) Error() string {
	return fmt.Sprintf("layer %s is a foreign layer (%s): helperbuild references it by its URLs and does not download it", e.Digest, e.MediaType)
}

// Foreign reports whether l is a foreign (non-distributable) layer, whose
// bytes are not read (see ForeignLayerError).
func Foreign(l v1.Layer) (bool, error) {
	mt, err := l.MediaType()
	if err != nil {
		return false, err
	}
	return !mt.IsDistributable(), nil
}
