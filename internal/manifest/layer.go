package manifest

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// asOCI returns l described with media type mt. Docker and OCI gzip layers
// are the same bytes, so only the descriptor changes. A layer that can be
// mounted from its source repository stays mountable.
func asOCI(l v1.Layer, mt types.MediaType) v1.Layer {
	if cur, err := l.MediaType(); err == nil && cur == mt {
		return l
	}
	if ml, ok := l.(*remote.MountableLayer); ok {
		return &remote.MountableLayer{Layer: &ociLayer{Layer: ml.Layer, mt: mt}, Reference: ml.Reference}
	}
	return &ociLayer{Layer: l, mt: mt}
}

// ociLayer overrides a layer's media type.
type ociLayer struct {
	v1.Layer
	mt types.MediaType
}

var _ v1.Layer = (*ociLayer)(nil)

func (l *ociLayer) MediaType() (types.MediaType, error) { return l.mt, nil }
