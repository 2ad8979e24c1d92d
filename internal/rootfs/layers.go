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
	kept := map[Source][]byte{}
	var each func(Source, string, *tar.Header, io.Reader) error
	if keep != nil {
		each = func(src Source, p string, hdr *tar.Header, r io.Reader) error {
			if hdr.Size > MaxKept || !keep(p) {
				return nil
			}
			data, err := io.ReadAll(io.LimitReader(r, MaxKept))
			if err != nil {
				return err
			}
			kept[src] = data
			return nil
		}
	}
	f, err := FlattenEach(ctx, layers, each)
	if err != nil {
		return nil, nil, err
	}
	return f, kept, nil
}

// FlattenEach is Flatten that also hands every regular file, from the same
// single pass, to fn with its Source, cleaned path, header and contents (fn
// may leave them unread). As with FlattenKeeping, a file fn sees may be
// replaced by a later layer: the FS says which Source counts. fn nil is
// Flatten. A foreign (non-distributable) layer, such as a Windows base's OS
// layer, is skipped: its bytes are never fetched, so its files are unknown.
func FlattenEach(ctx context.Context, layers []v1.Layer, fn func(src Source, path string, hdr *tar.Header, r io.Reader) error) (*FS, error) {
	return flattenEach(ctx, layers, fn, nil)
}

// flattenEach is FlattenEach, appending every header to hs unless nil.
func flattenEach(ctx context.Context, layers []v1.Layer, fn func(src Source, path string, hdr *tar.Header, r io.Reader) error, hs *[]Header) (*FS, error) {
	f := New()
	for i, l := range layers {
		if mt, err := l.MediaType(); err == nil && !mt.IsDistributable() {
			continue // a foreign layer: its files are on servers not asked (Windows bases)
		}
		err := EachEntry(ctx, l, func(seq int, hdr *tar.Header, r io.Reader) error {
			f.Add(i, seq, hdr)
			if hs != nil {
				record(hs, i, seq, hdr)
			}
			if fn == nil || (hdr.Typeflag != tar.TypeReg && hdr.Typeflag != tar.TypeRegA) { //nolint:staticcheck // old archives
				return nil
			}
			return fn(Source{i, seq}, Clean(hdr.Name), hdr, r)
		})
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return f, nil
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
