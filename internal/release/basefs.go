package release

import (
	"context"
	"fmt"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// flatBases flattens each base image once per run, keyed by its manifest
// digest, so the platforms of several images that share a base read its
// layers once. The zero value is ready to use.
type flatBases struct {
	mu sync.Mutex
	m  map[v1.Hash]*flatBase
}

type flatBase struct {
	once sync.Once
	fs   *rootfs.FS
	err  error
}

// get returns the flattened filesystem of img, whose manifest digest is dig.
func (b *flatBases) get(ctx context.Context, dig v1.Hash, img v1.Image) (*rootfs.FS, error) {
	b.mu.Lock()
	if b.m == nil {
		b.m = map[v1.Hash]*flatBase{}
	}
	fb := b.m[dig]
	if fb == nil {
		fb = &flatBase{}
		b.m[dig] = fb
	}
	b.mu.Unlock()
	fb.once.Do(func() {
		layers, err := img.Layers()
		if err != nil {
			fb.err = fmt.Errorf("base %s layers: %w", dig, err)
			return
		}
		if fb.fs, fb.err = rootfs.Flatten(ctx, layers); fb.err != nil {
			fb.err = fmt.Errorf("base %s: %w", dig, fb.err)
		}
	})
	return fb.fs, fb.err
}
