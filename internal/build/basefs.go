package build

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// flatBases flattens each base image once per run, keyed by its manifest
// digest, so the platforms of several images that share a base read its
// layers once. The zero value is ready to use.
type flatBases struct {
	// readOS also reads each base's os-release and package database and
	// finds its Go binaries (for the SBOM) in the same pass over its layers.
	readOS bool
	// store keeps each base's flattening between runs (nil: none).
	store *flatStore

	mu sync.Mutex
	m  map[v1.Hash]*flatBase
}

type flatBase struct {
	once    sync.Once
	fs      *rootfs.FS
	os      attest.OS
	bins    []attest.Binary // Go binaries, with readOS
	skipped []string        // ELF executables not read for Go binaries
	err     error
}

// get returns the flattened filesystem of img, whose manifest digest is dig.
func (b *flatBases) get(ctx context.Context, dig v1.Hash, img v1.Image) (*rootfs.FS, error) {
	fb := b.flat(ctx, dig, img)
	return fb.fs, fb.err
}

// contents is what the base's os-release and package database say and
// its Go binaries; zero unless readOS.
func (b *flatBases) contents(ctx context.Context, dig v1.Hash, img v1.Image) (attest.OS, []attest.Binary, []string, error) {
	fb := b.flat(ctx, dig, img)
	return fb.os, fb.bins, fb.skipped, fb.err
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
		if b.store.load(dig, b.readOS, fb) {
			return
		}
		var hs []rootfs.Header
		defer func() { b.store.save(dig, b.readOS, hs, fb) }()
		layers, err := img.Layers()
		if err != nil {
			fb.err = fmt.Errorf("base %s layers: %w", dig, err)
			return
		}
		if !b.readOS {
			fb.fs, hs, fb.err = rootfs.FlattenEachRecorded(ctx, layers, nil)
			if fb.err != nil {
				fb.err = fmt.Errorf("base %s: %w", dig, fb.err)
			}
			return
		}
		// One pass: keep the package databases, read Go build info.
		kept := map[rootfs.Source][]byte{}
		var scan attest.BaseScan
		fs, hs, err := rootfs.FlattenEachRecorded(ctx, layers, func(src rootfs.Source, p string, hdr *tar.Header, r io.Reader) error {
			if attest.OSFile(p) && hdr.Size <= rootfs.MaxKept {
				data, err := io.ReadAll(r)
				kept[src] = data
				return err
			}
			return scan.Visit(src, p, hdr, r)
		})
		if err == nil {
			fb.fs, fb.bins, fb.skipped = fs, scan.Binaries(fs), scan.Skipped()
			fb.os, err = attest.ReadOSKept(ctx, fs, kept, layers)
		}
		if err != nil {
			fb.err = fmt.Errorf("base %s: %w", dig, err)
		}
	})
	return fb
}

// prefetch flattens the bases of units, one after another in unit order,
// beside the compiles: the platform linked last then finds its base read
// instead of fetching and flattening it after the last link. It stops
// between bases once stop is closed or ctx ends (a base being read is read
// to the end with ctx, so no unit waiting for it gets another error). A
// base's error stays with it, for get to return where its unit is
// assembled.
func (b *flatBases) prefetch(ctx context.Context, units [][]unit, stop <-chan struct{}) {
	for _, us := range units {
		for _, u := range us {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			if u.base != nil {
				b.flat(ctx, u.baseDig, u.base)
			}
		}
	}
}
