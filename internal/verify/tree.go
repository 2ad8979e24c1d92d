package verify

import (
	"archive/tar"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// maxLinks bounds symlink resolution, like the kernel's MAXSYMLINKS.
const maxLinks = 40

// source names where a regular file's bytes live: the seq-th tar header of
// layer layer. Hardlinks share their target's source.
type source struct{ layer, seq int }

// inode is one entry of the flattened filesystem: metadata only, contents stay
// in the layers and are read again by source when a check needs them.
type inode struct {
	typ      byte // tar.TypeDir, tar.TypeReg, tar.TypeSymlink or another tar type
	mode     fs.FileMode
	uid, gid int
	size     int64
	link     string // symlink target
	src      source
	layer    int // last layer that wrote or touched this entry
	children map[string]*inode
}

func (n *inode) isDir() bool { return n.typ == tar.TypeDir }
func (n *inode) isReg() bool { return n.typ == tar.TypeReg }

// tree is the filesystem a container runtime presents after applying an
// image's layers in order (overlayfs semantics, see apply).
type tree struct {
	root *inode
	// issues are entries a runtime would refuse or that point nowhere
	// (a hardlink to a missing file).
	issues []string
}

func newTree() *tree {
	return &tree{root: &inode{typ: tar.TypeDir, mode: fs.ModeDir | 0o755, children: map[string]*inode{}}}
}

// cleanName turns a tar entry name into a clean absolute path; "" for the root.
func cleanName(name string) string {
	p := path.Clean("/" + name)
	if p == "/" {
		return ""
	}
	return p
}

// dir returns the directory at the clean absolute path p, creating missing
// parents as directories and replacing non-directories in the way, as
// overlayfs does when an upper layer holds a directory where a lower one held
// a file or symlink. Every directory on the way is marked as touched by layer.
func (t *tree) dir(p string, layer int) *inode {
	cur := t.root
	for _, name := range splitPath(p) {
		next := cur.children[name]
		if next == nil || !next.isDir() {
			next = &inode{typ: tar.TypeDir, mode: fs.ModeDir | 0o755, children: map[string]*inode{}}
			cur.children[name] = next
		}
		next.layer = layer
		cur = next
	}
	return cur
}

// apply adds one tar header of layer (its seq-th) to the tree. Whiteouts
// (".wh.NAME") delete NAME from lower layers, opaque markers (".wh..wh..opq")
// hide everything lower layers put into their directory, hardlinks copy their
// target's metadata and content source, and a non-directory replaces whatever
// was at its path, directory contents included.
func (t *tree) apply(hdr *tar.Header, layer, seq int) {
	p := cleanName(hdr.Name)
	if p == "" || hdr.Typeflag == tar.TypeXGlobalHeader {
		return
	}
	parentPath, base := path.Split(p)
	parent := t.dir(parentPath, layer)
	if base == ".wh..wh..opq" {
		hideLower(parent, layer)
		return
	}
	if strings.HasPrefix(base, ".wh.") {
		if n := parent.children[base[len(".wh."):]]; n != nil && n.layer < layer {
			delete(parent.children, base[len(".wh."):])
		}
		return
	}
	n := &inode{
		typ: hdr.Typeflag, mode: tarMode(hdr.Mode),
		uid: hdr.Uid, gid: hdr.Gid, size: hdr.Size, link: hdr.Linkname,
		src: source{layer, seq}, layer: layer,
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if old := parent.children[base]; old != nil && old.isDir() {
			// A directory over a directory merges: keep the children.
			n.children = old.children
		} else {
			n.children = map[string]*inode{}
		}
		n.mode |= fs.ModeDir
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives still use TypeRegA
		n.typ = tar.TypeReg
	case tar.TypeLink:
		target, err := t.lookup(cleanName(hdr.Linkname))
		if err != nil || !target.isReg() {
			t.issues = append(t.issues, fmt.Sprintf("%s is a hardlink to %s, which is not a regular file in the layers below it", p, cleanName(hdr.Linkname)))
			return
		}
		c := *target
		c.layer = layer
		n = &c
	case tar.TypeSymlink:
		n.mode |= fs.ModeSymlink
	}
	parent.children[base] = n
}

// tarMode converts tar's octal mode (c_ISUID 04000, c_ISGID 02000, c_ISVTX
// 01000, permission bits) into fs.FileMode bits.
func tarMode(m int64) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// hideLower removes every entry below dir that no layer from layer on wrote or
// touched (opaque directory).
func hideLower(dir *inode, layer int) {
	for name, c := range dir.children {
		if c.layer < layer {
			delete(dir.children, name)
			continue
		}
		if c.isDir() {
			hideLower(c, layer)
		}
	}
}

var (
	errNotFound = errors.New("no such file or directory")
	errNotDir   = errors.New("not a directory")
	errLoop     = errors.New("too many levels of symbolic links")
)

// lookup returns the entry at p without following any symlink.
func (t *tree) lookup(p string) (*inode, error) {
	cur := t.root
	for _, name := range splitPath(p) {
		if !cur.isDir() {
			return nil, errNotDir
		}
		next := cur.children[name]
		if next == nil {
			return nil, errNotFound
		}
		cur = next
	}
	return cur, nil
}

// resolve follows p through symlinks, relative and absolute, the way the
// kernel would inside a chroot at the image's root: ".." stops at the root
// and at most maxLinks links are followed. It returns the entry and its
// resolved path. With followLast false a final symlink is returned itself.
func (t *tree) resolve(p string, followLast bool) (*inode, string, error) {
	type step struct {
		name string
		node *inode
	}
	var stack []step // resolved path so far; empty is the root
	cur := func() *inode {
		if len(stack) == 0 {
			return t.root
		}
		return stack[len(stack)-1].node
	}
	pending := splitPath(p)
	links := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		dir := cur()
		if !dir.isDir() {
			return nil, "", errNotDir
		}
		next := dir.children[name]
		if next == nil {
			return nil, "", errNotFound
		}
		if next.typ == tar.TypeSymlink && (len(pending) > 0 || followLast) {
			links++
			if links > maxLinks {
				return nil, "", errLoop
			}
			if strings.HasPrefix(next.link, "/") {
				stack = stack[:0]
			}
			pending = append(splitPath(next.link), pending...)
			continue
		}
		stack = append(stack, step{name, next})
	}
	names := make([]string, len(stack))
	for i, s := range stack {
		names[i] = s.name
	}
	return cur(), "/" + strings.Join(names, "/"), nil
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

// walk calls fn for every entry below the root in lexical path order
// (parents before children).
func (t *tree) walk(fn func(p string, n *inode) error) error {
	return walkDir("", t.root, fn)
}

func walkDir(prefix string, dir *inode, fn func(string, *inode) error) error {
	names := make([]string, 0, len(dir.children))
	for name := range dir.children {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := dir.children[name]
		p := prefix + "/" + name
		if err := fn(p, c); err != nil {
			return err
		}
		if c.isDir() {
			if err := walkDir(p, c, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
