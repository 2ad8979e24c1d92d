package verify

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// ownComment is the history comment BuildKit (and so buildx and helperbuild)
// writes for Dockerfile instructions.
const ownComment = "buildkit.dockerfile.v0"

// ownLayers marks the layers the image's own Dockerfile added. Non-empty
// history entries map one to one onto layers, in order; when they do not (or
// there is no history, or no entry carries the BuildKit comment) every layer
// counts as own and matched is false.
func ownLayers(cfg *v1.ConfigFile, nLayers int) (own []bool, matched bool) {
	own = make([]bool, nLayers)
	var marks []bool
	for _, h := range cfg.History {
		if !h.EmptyLayer {
			marks = append(marks, h.Comment == ownComment)
		}
	}
	marked := false
	for _, m := range marks {
		marked = marked || m
	}
	if len(marks) != nLayers || !marked {
		for i := range own {
			own[i] = true
		}
		return own, false
	}
	copy(own, marks)
	return own, true
}

// isExec reports whether any execute bit is set.
func isExec(mode int64) bool { return mode&0o111 != 0 }

// scanFunc is called for each executable regular file of an own layer whose
// contents start with the ELF magic; f holds the whole file, spooled to disk.
type scanFunc func(p string, src rootfs.Source, hdr *tar.Header, f *os.File) error

// scan streams every layer once, in order: it adds each header to t (when
// t is not nil) and hands the ELF executables of the layers marked in elfs to
// fn. Nothing is unpacked; ELF files are spooled one at a time to tmpDir.
// What it decompresses, and so spools, and the headers it adds count
// against b (nil: no bound); past it, the error is a *layersTooBigError.
func scan(ctx context.Context, layers []v1.Layer, b *readBudget, t *rootfs.FS, elfs []bool, tmpDir string, fn scanFunc) error {
	for i, l := range b.bound(layers) {
		if t == nil && !elfs[i] {
			continue
		}
		err := rootfs.EachEntry(ctx, l, func(seq int, hdr *tar.Header, r io.Reader) error {
			if err := b.entry(); err != nil {
				return err
			}
			if t != nil {
				t.Add(i, seq, hdr)
			}
			if !elfs[i] || !isRegular(hdr) || !isExec(hdr.Mode) {
				return nil
			}
			return elfcheck.SpoolELF(r, tmpDir, func(f *os.File) error {
				return fn(rootfs.Clean(hdr.Name), rootfs.Source{Layer: i, Seq: seq}, hdr, f)
			})
		})
		if err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return nil
}

func isRegular(hdr *tar.Header) bool {
	return hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA //nolint:staticcheck // old archives
}
