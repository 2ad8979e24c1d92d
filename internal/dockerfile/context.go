package dockerfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinks = 40

// contextDir is a directory COPY reads from. Paths inside it are slash
// separated and relative to its root ("" is the root). Resolving one never
// leaves the root: a symlink whose target is outside is an error, never
// followed, so a resolved path names a host file with no symlink on its way.
type contextDir struct {
	label string // "build context" or `context "binary_dir"`
	dir   string // as configured
	real  string // absolute, with symlinks evaluated
}

func openContext(label, dir string) (*contextDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", label, dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", label, dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", label, dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s %s is not a directory", label, dir)
	}
	return &contextDir{label: label, dir: dir, real: real}, nil
}

func (c *contextDir) String() string { return fmt.Sprintf("%s (%s)", c.label, c.dir) }

// host is the host path of a resolved path.
func (c *contextDir) host(rel string) string { return filepath.Join(c.real, filepath.FromSlash(rel)) }

// escapeError says which symlink leads outside the context.
type escapeError struct{ link, target string }

func (e *escapeError) Error() string {
	if e.link == "" {
		return fmt.Sprintf("%q is above the context root", e.target)
	}
	return fmt.Sprintf("symlink %q points to %q", e.link, e.target)
}

// errNotFound marks a path that does not exist in the context.
var errNotFound = errors.New("not found")

// resolve resolves symlinks in rel inside the context, the last element only
// if followFinal. It returns errNotFound or an *escapeError.
func (c *contextDir) resolve(rel string, followFinal bool) (string, error) {
	var done []string
	todo := splitPath(rel)
	links := 0
	last := escapeError{target: ".."} // the last relative symlink followed
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", &last
			}
			done = done[:len(done)-1]
			continue
		}
		cur := append(done[:len(done):len(done)], part)
		if len(todo) == 0 && !followFinal {
			done = cur
			break
		}
		hp := c.host(strings.Join(cur, "/"))
		fi, err := os.Lstat(hp)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return "", errNotFound
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = cur
			continue
		}
		if links++; links > maxSymlinks {
			return "", fmt.Errorf("%q: too many levels of symbolic links", strings.Join(cur, "/"))
		}
		target, err := os.Readlink(hp)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			inside, err := filepath.Rel(c.real, filepath.Clean(target))
			if err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
				return "", &escapeError{link: strings.Join(cur, "/"), target: target}
			}
			done = nil
			todo = append(splitPath(filepath.ToSlash(inside)), todo...)
			continue
		}
		last = escapeError{link: strings.Join(cur, "/"), target: target}
		todo = append(splitPath(target), todo...)
	}
	return strings.Join(done, "/"), nil
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// source is one path a COPY source names or matches.
type source struct {
	name string      // as written or matched, relative to the context root
	rel  string      // resolved: no symlinks on the way, the last one followed
	info fs.FileInfo // of rel
}

// match expands a cleaned, root-relative source (wildcards allowed in any
// element, with filepath.Match syntax) into its sources in lexical order.
// Following a symlink that leaves the context is an error even when
// searching. It returns errNotFound when nothing matches.
func (c *contextDir) match(src string) ([]source, error) {
	cands := []string{""}
	for _, part := range splitPath(src) {
		if !hasMeta(part) {
			for i := range cands {
				cands[i] = path.Join(cands[i], part)
			}
			continue
		}
		if _, err := path.Match(part, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", src, err)
		}
		var next []string
		for _, cand := range cands {
			dir, err := c.resolve(cand, true)
			if errors.Is(err, errNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			list, err := os.ReadDir(c.host(dir))
			if err != nil {
				if errors.Is(err, syscall.ENOTDIR) {
					continue
				}
				return nil, err
			}
			for _, e := range list {
				if ok, _ := path.Match(part, e.Name()); ok {
					next = append(next, path.Join(cand, e.Name()))
				}
			}
		}
		cands = next
	}
	out := make([]source, 0, len(cands))
	for _, cand := range cands {
		rel, err := c.resolve(cand, true)
		if errors.Is(err, errNotFound) && hasMeta(src) {
			continue // a match of an earlier wildcard without the rest of the path
		}
		if err != nil {
			return nil, err
		}
		fi, err := os.Lstat(c.host(rel))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, errNotFound
			}
			return nil, err
		}
		out = append(out, source{name: cand, rel: rel, info: fi})
	}
	if len(out) == 0 {
		return nil, errNotFound
	}
	return out, nil
}

// hasMeta reports whether a path element has filepath.Match syntax.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }
