package rootfs

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// HasDir reports whether p is a directory once symlinks are followed, as
// a Dockerfile's COPY and WORKDIR see it.
func (f *FS) HasDir(p string) bool {
	_, info, err := f.Resolve(p, true)
	return err == nil && info.IsDir()
}

// Place adapts one layer's entries to the filesystem f they go on, as
// BuildKit does when it copies into a base image's filesystem:
//
//   - Each entry's parent directories are resolved through f's symlinks
//     (absolute and relative; a link out of the root stops at the root), so
//     with /bin -> usr/bin, /bin/foo becomes /usr/bin/foo and the layer
//     never holds a "bin/" directory that would hide the symlink. A
//     directory entry at a symlink to a directory moves to the directory.
//   - Every parent f has as a directory gets an explicit entry with f's
//     mode and owner (/tmp stays 1777); parents f lacks are left to the
//     layer writer (0755, 0:0).
//
// When two entries land on the same path, the later one wins (the later
// copy overwrites), except that two directories keep the first. A parent
// chain through a non-directory or a symlink loop is an error naming the
// entry. Entries whose path is not absolute or holds ".." are passed on
// unchanged for the layer writer to refuse.
func (f *FS) Place(entries []Entry) ([]Entry, error) {
	out := make([]Entry, 0, len(entries))
	at := make(map[string]int, len(entries))
	for _, e := range entries {
		p, err := f.placePath(e)
		if err != nil {
			return nil, fmt.Errorf("%s on the base image: %w", e.Path, err)
		}
		if p == "" {
			continue // a directory entry for a link to the root: it exists
		}
		e.Path = p
		if i, dup := at[p]; dup {
			if out[i].Kind != Dir || e.Kind != Dir {
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
			info, ok := f.Lookup(d)
			if !ok || !info.IsDir() {
				continue
			}
			at[d] = len(out)
			out = append(out, Entry{Path: d, Kind: Dir, Mode: info.Mode & ModeBits, UID: info.UID, GID: info.GID})
		}
	}
	return out, nil
}

// placePath is where e lands on f; "" drops a directory entry that
// resolves to the root.
func (f *FS) placePath(e Entry) (string, error) {
	if !plainPath(e.Path) {
		return e.Path, nil
	}
	p := path.Clean(e.Path)
	if e.Kind == Dir {
		if resolved, info, err := f.Resolve(p, true); err == nil && info.IsDir() {
			if resolved == "/" {
				return "", nil
			}
			return resolved, nil
		}
	}
	dir, name := path.Split(p)
	resolved, info, err := f.Resolve(dir, true)
	switch {
	case err == nil && !info.IsDir():
		return "", ErrNotDir
	case err != nil && !errors.Is(err, ErrNotExist):
		return "", err
	}
	return path.Join(resolved, name), nil
}

// plainPath reports whether p is absolute, not the root and free of ".."
// elements: a path the layer writer accepts.
func plainPath(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) != "/" && !slices.Contains(strings.Split(p, "/"), "..")
}
