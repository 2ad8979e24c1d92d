package rootfs

import (
	"archive/tar"
	"errors"
	"sort"
	"strings"
)

// maxLinks bounds symlink resolution, like the kernel's MAXSYMLINKS.
const maxLinks = 40

// Errors of Resolve, worded as the kernel's.
var (
	ErrNotExist = errors.New("no such file or directory")
	ErrNotDir   = errors.New("not a directory")
	ErrLoop     = errors.New("too many levels of symbolic links")
)

// Lookup returns the entry stored at p (cleaned, taken from the root)
// without following any symlink, not even on the way.
func (f *FS) Lookup(p string) (Info, bool) {
	n := f.lookup(p)
	if n == nil {
		return Info{}, false
	}
	return n.Info, true
}

func (f *FS) lookup(p string) *node {
	cur := f.root
	for rest := p; rest != ""; {
		var name string
		if name, rest, _ = strings.Cut(rest, "/"); name == "" {
			continue
		}
		if !cur.IsDir() {
			return nil
		}
		next := cur.children[name]
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// Resolve follows p (taken from the root) through symlinks, relative and
// absolute, the way the kernel would inside a chroot at the image's root:
// ".." stops at the root and at most 40 links are followed (else ErrLoop).
// It returns the resolved clean absolute path and its entry. With followLast
// false a final symlink is returned itself (lstat); with true it is followed
// (stat).
//
// A component that is missing gives ErrNotExist; the path returned with it
// is then where creating p would land: the resolved path up to the missing
// component, followed by the rest of the components taken lexically (as
// "mkdir -p" would create them). A component on the way that is not a
// directory gives ErrNotDir.
func (f *FS) Resolve(p string, followLast bool) (string, Info, error) {
	names := make([]string, 0, 8) // resolved path so far; empty is the root
	nodes := make([]*node, 0, 8)  // their entries; nil once missing
	cur := func() *node {
		if len(nodes) == 0 {
			return f.root
		}
		return nodes[len(nodes)-1]
	}
	pending := splitPath(p)
	links := 0
	missing := false
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case ".":
			continue
		case "..":
			if len(names) > 0 {
				names, nodes = names[:len(names)-1], nodes[:len(nodes)-1]
			}
			continue
		}
		if missing {
			names, nodes = append(names, name), append(nodes, nil)
			continue
		}
		dir := cur()
		if !dir.IsDir() {
			return "", Info{}, ErrNotDir
		}
		next := dir.children[name]
		if next == nil {
			missing = true
			names, nodes = append(names, name), append(nodes, nil)
			continue
		}
		if next.Type == tar.TypeSymlink && (len(pending) > 0 || followLast) {
			links++
			if links > maxLinks {
				return "", Info{}, ErrLoop
			}
			if strings.HasPrefix(next.Linkname, "/") {
				names, nodes = names[:0], nodes[:0]
			}
			pending = append(splitPath(next.Linkname), pending...)
			continue
		}
		names, nodes = append(names, name), append(nodes, next)
	}
	resolved := "/" + strings.Join(names, "/")
	if missing {
		return resolved, Info{}, ErrNotExist
	}
	return resolved, cur().Info, nil
}

// Walk calls fn for every entry below the root in lexical path order
// (parents before children) with its clean absolute path; the first error fn
// returns stops the walk and is returned.
func (f *FS) Walk(fn func(p string, info Info) error) error {
	return walkDir("", f.root, fn)
}

func walkDir(prefix string, dir *node, fn func(string, Info) error) error {
	names := make([]string, 0, len(dir.children))
	for name := range dir.children {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := dir.children[name]
		p := prefix + "/" + name
		if err := fn(p, c.Info); err != nil {
			return err
		}
		if c.IsDir() {
			if err := walkDir(p, c, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
