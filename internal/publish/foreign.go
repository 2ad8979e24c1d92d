package publish

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// distributable is img's layers without the foreign (non-distributable)
// ones: those of Windows base images, which the manifest references by
// descriptor and URLs and no destination receives (as docker push and
// go-containerregistry's remote.Write do by default).
func distributable(img v1.Image) ([]v1.Layer, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	out := layers[:0:0]
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil {
			return nil, err
		}
		if mt.IsDistributable() {
			out = append(out, l)
		}
	}
	return out, nil
}
