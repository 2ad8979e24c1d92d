package layer

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// plan validates entries and returns them in layer order: paths cleaned,
// missing parent directories added (0755, 0:0), sorted so that parents come
// before children and a directory's contents are contiguous. It never touches
// the file system.
func plan(entries []rootfs.Entry) ([]rootfs.Entry, error) {
	byPath := make(map[string]int, len(entries))
	out := make([]rootfs.Entry, 0, len(entries))
	for _, e := range entries {
		p, err := cleanPath(e.Path)
		if err != nil {
			return nil, err
		}
		if err := checkEntry(e); err != nil {
			return nil, fmt.Errorf("layer entry %q: %w", e.Path, err)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("layer entry %q: duplicate path %s", e.Path, p)
		}
		e.Path = p
		if e.Kind == rootfs.Symlink && e.Mode == 0 {
			e.Mode = fs.ModePerm
		}
		byPath[p] = len(out)
		out = append(out, e)
	}
	explicit := len(out)
	for i := range explicit {
		child := out[i].Path
		for dir := path.Dir(child); dir != "/"; dir = path.Dir(dir) {
			j, ok := byPath[dir]
			if !ok {
				byPath[dir] = len(out)
				out = append(out, rootfs.Entry{Path: dir, Kind: rootfs.Dir, Mode: 0o755})
				continue
			}
			if out[j].Kind != rootfs.Dir {
				return nil, fmt.Errorf("layer entry %q: parent %s is not a directory", child, dir)
			}
		}
	}
	slices.SortFunc(out, func(a, b rootfs.Entry) int { return comparePaths(a.Path, b.Path) })
	return out, nil
}

// cleanPath returns the cleaned form of an absolute entry path. Relative
// paths, ".." elements (even ones Clean would absorb: "/a/../b" is rejected
// rather than silently becoming "/b"), NUL bytes and the root itself are errors.
func cleanPath(p string) (string, error) {
	switch {
	case !strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("layer entry %q: path must be absolute", p)
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("layer entry %q: path contains a NUL byte", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", fmt.Errorf("layer entry %q: path must not contain \"..\"", p)
	}
	c := path.Clean(p)
	if c == "/" {
		return "", fmt.Errorf("layer entry %q: the root directory cannot be an entry", p)
	}
	return c, nil
}

// checkEntry validates everything but the path.
func checkEntry(e rootfs.Entry) error {
	if e.Mode&^rootfs.ModeBits != 0 {
		return fmt.Errorf("mode %v has bits other than permissions and setuid/setgid/sticky", e.Mode)
	}
	if e.UID < 0 || e.GID < 0 {
		return fmt.Errorf("negative uid/gid %d:%d", e.UID, e.GID)
	}
	switch e.Kind {
	case rootfs.File:
		if e.Source == "" || e.Linkname != "" {
			return fmt.Errorf("a file needs Source and no Linkname")
		}
	case rootfs.Dir:
		if e.Source != "" || e.Linkname != "" {
			return fmt.Errorf("a directory takes neither Source nor Linkname")
		}
	case rootfs.Symlink:
		if e.Linkname == "" || e.Source != "" {
			return fmt.Errorf("a symlink needs Linkname and no Source")
		}
		if strings.IndexByte(e.Linkname, 0) >= 0 {
			return fmt.Errorf("link target %q contains a NUL byte", e.Linkname)
		}
	default:
		return fmt.Errorf("unknown kind %d", e.Kind)
	}
	return nil
}

// comparePaths orders cleaned absolute paths component by component, as if
// '/' sorted before every other byte: "/a", "/a/b", "/a-b". A parent is a
// prefix of its children, so it always comes first.
func comparePaths(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}
