package rootfs

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Flatten streams every layer once, in order, and returns the filesystem
// they make. Contents are skipped, never stored.
func Flatten(ctx context.Context, layers []v1.Layer) (*FS, error) {
	f, _, err := FlattenKeeping(ctx, layers, nil)
	return f, err
}

// MaxKept bounds the contents FlattenKeeping keeps of one file; a larger
// file is skipped (its Source is missing from the map).
const MaxKept = 16 << 20

// FlattenKeeping is Flatten that also keeps, from the same single pass,
// the contents of every regular file whose cleaned path keep selects (at
// most MaxKept bytes each), by Source. Whether a kept file is still there
// at the end is for the FS to say (Resolve gives the Source that counts);
// the map may hold files a later layer replaced. keep nil keeps nothing.
func FlattenKeeping(ctx context.Context, layers []v1.Layer, keep func(path string) bool) (*FS, map[Source][]byte, error) {
	f := New()
	kept := map[Source][]byte{}
	for i, l := range layers {
		err := EachEntry(ctx, l, func(seq int, hdr *tar.Header, r io.Reader) error {
			f.Add(i, seq, hdr)
			if keep == nil || (hdr.Typeflag != tar.TypeReg && hdr.Typeflag != tar.TypeRegA) || hdr.Size > MaxKept || !keep(Clean(hdr.Name)) {
				return nil
			}
			data, err := io.ReadAll(io.LimitReader(r, MaxKept))
			if err != nil {
				return err
			}
			kept[Source{i, seq}] = data
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return f, kept, nil
}

// ReadSources streams only the layers holding the wanted sources and calls
// fn with each wanted entry's contents, in layer then tar order.
func ReadSources(ctx context.Context, layers []v1.Layer, want map[Source]bool, fn func(src Source, r io.Reader) error) error {
	needed := make([]bool, len(layers))
	for s := range want {
		if s.Layer < 0 || s.Layer >= len(layers) {
			return fmt.Errorf("source %d/%d: the image has %d layers", s.Layer, s.Seq, len(layers))
		}
		needed[s.Layer] = true
	}
	for i, l := range layers {
		if !needed[i] {
			continue
		}
		err := EachEntry(ctx, l, func(seq int, _ *tar.Header, r io.Reader) error {
			if !want[Source{i, seq}] {
				return nil
			}
			return fn(Source{i, seq}, r)
		})
		if err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return nil
}

// EachEntry streams the uncompressed tar of l and calls fn for every header
// with its seq number (from 0) and contents; ctx is checked between headers.
func EachEntry(ctx context.Context, l v1.Layer, fn func(seq int, hdr *tar.Header, r io.Reader) error) (err error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
	}()
	tr := tar.NewReader(rc)
	for seq := 0; ; seq++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(seq, hdr, tr); err != nil {
			return err
		}
	}
}
