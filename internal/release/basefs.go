package release

import (
	"context"
	"fmt"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// flatBases flattens each base image once per run, keyed by its manifest
// digest, so the platforms of several images that share a base read its
// layers once. The zero value is ready to use.
type flatBases struct {
	// readOS also reads each base's os-release and package database (for
	// the SBOM) from the same pass over its layers.
	readOS bool

	mu sync.Mutex
	m  map[v1.Hash]*flatBase
}

type flatBase struct {
	once sync.Once
	fs   *rootfs.FS
	os   attest.OS
	err  error
}

// get returns the flattened filesystem of img, whose manifest digest is dig.
func (b *flatBases) get(ctx context.Context, dig v1.Hash, img v1.Image) (*rootfs.FS, error) {
	fb := b.flat(ctx, dig, img)
	return fb.fs, fb.err
}

// osOf is what the base's os-release and package database say; zero
// unless readOS.
func (b *flatBases) osOf(ctx context.Context, dig v1.Hash, img v1.Image) (attest.OS, error) {
	fb := b.flat(ctx, dig, img)
	return fb.os, fb.err
}

func (b *flatBases) flat(ctx context.Context, dig v1.Hash, img v1.Image) *flatBase {
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
		var keep func(string) bool
		if b.readOS {
			keep = attest.OSFile
		}
		fs, kept, err := rootfs.FlattenKeeping(ctx, layers, keep)
		if err != nil {
			fb.err = fmt.Errorf("base %s: %w", dig, err)
			return
		}
		fb.fs = fs
		if b.readOS {
			if fb.os, err = attest.ReadOSKept(ctx, fs, kept, layers); err != nil {
				fb.err = fmt.Errorf("base %s: %w", dig, err)
			}
		}
	})
	return fb
}
