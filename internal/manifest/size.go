package manifest

import v1 "github.com/google/go-containerregistry/pkg/v1"

// CompressedSize is what a pull of m's image downloads: its config and
// layers as the manifest lists them (the layers compressed). It reads no
// blob; the manifest's own size is not counted.
func CompressedSize(m *v1.Manifest) int64 {
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n
}
