package release

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
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

// hasDir answers dockerfile.Contexts.BaseHasDir from the flattened base:
// p is a directory once symlinks are followed, as COPY and WORKDIR see it.
func hasDir(base *rootfs.FS) func(string) bool {
	return func(p string) bool {
		_, info, err := base.Resolve(p, true)
		return err == nil && info.IsDir()
	}
}

// onBase adapts one layer's entries to the base they go on, as BuildKit
// does when it copies into the base's filesystem:
//
//   - Each entry's parent directories are resolved through the base's
//     symlinks (absolute and relative; a link out of the root stops at the
//     root), so with /bin -> usr/bin, /bin/foo becomes /usr/bin/foo and the
//     layer never holds a "bin/" directory that would hide the symlink. A
//     directory entry at a symlink to a directory moves to the directory.
//   - Every parent the base has as a directory gets an explicit entry with
//     the base's mode and owner (/tmp stays 1777); parents the base lacks
//     are left to layer.Write (0755, 0:0).
//
// When two entries land on the same path, the later one wins (the later
// copy overwrites), except that two directories keep the first. A parent
// chain through a non-directory or a symlink loop is an error naming the
// entry. Entries whose path is not absolute or holds ".." are passed on
// unchanged for layer.Write to refuse.
func onBase(base *rootfs.FS, entries []rootfs.Entry) ([]rootfs.Entry, error) {
	out := make([]rootfs.Entry, 0, len(entries))
	at := make(map[string]int, len(entries))
	for _, e := range entries {
		p, err := onBasePath(base, e)
		if err != nil {
			return nil, fmt.Errorf("%s on the base image: %w", e.Path, err)
		}
		if p == "" {
			continue // a directory entry for a link to the root: it exists
		}
		e.Path = p
		if i, dup := at[p]; dup {
			if out[i].Kind != rootfs.Dir || e.Kind != rootfs.Dir {
				out[i] = e
			}
			continue
		}
		at[p] = len(out)
		out = append(out, e)
	}
	explicit := len(out)
	for i := range explicit {
		if !plainPath(out[i].Path) {
			continue
		}
		for d := path.Dir(out[i].Path); d != "/"; d = path.Dir(d) {
			if _, ok := at[d]; ok {
				continue
			}
			info, ok := base.Lookup(d)
			if !ok || !info.IsDir() {
				continue
			}
			at[d] = len(out)
			out = append(out, rootfs.Entry{Path: d, Kind: rootfs.Dir, Mode: info.Mode & rootfs.ModeBits, UID: info.UID, GID: info.GID})
		}
	}
	return out, nil
}

// onBasePath is where e lands on base; "" drops a directory entry that
// resolves to the root.
func onBasePath(base *rootfs.FS, e rootfs.Entry) (string, error) {
	if !plainPath(e.Path) {
		return e.Path, nil
	}
	p := path.Clean(e.Path)
	if e.Kind == rootfs.Dir {
		if resolved, info, err := base.Resolve(p, true); err == nil && info.IsDir() {
			if resolved == "/" {
				return "", nil
			}
			return resolved, nil
		}
	}
	dir, name := path.Split(p)
	resolved, info, err := base.Resolve(dir, true)
	switch {
	case err == nil && !info.IsDir():
		return "", rootfs.ErrNotDir
	case err != nil && !errors.Is(err, rootfs.ErrNotExist):
		return "", err
	}
	return path.Join(resolved, name), nil
}

// plainPath reports whether p is absolute, not the root and free of ".."
// elements: a path layer.Write accepts.
func plainPath(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) != "/" && !slices.Contains(strings.Split(p, "/"), "..")
}
