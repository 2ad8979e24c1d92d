package rootfs

import (
	"archive/tar"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Source names where a regular file's bytes live: the Seq-th tar header
// (from 0) of layer Layer (from 0). Hardlinks share their target's Source.
type Source struct{ Layer, Seq int }

// Info is the metadata of one entry.
type Info struct {
	// Type is tar.TypeDir, tar.TypeReg (tar.TypeRegA is normalised to it),
	// tar.TypeSymlink or another tar type (devices, fifos) as found.
	Type byte
	// Mode holds the permission and setuid/setgid/sticky bits, plus
	// fs.ModeDir or fs.ModeSymlink for directories and symlinks.
	Mode     fs.FileMode
	UID, GID int
	Size     int64
	Linkname string // symlink target, as written
	Source   Source // where a regular file's contents are
}

// IsDir reports whether the entry is a directory.
func (i Info) IsDir() bool { return i.Type == tar.TypeDir }

// IsRegular reports whether the entry is a regular file.
func (i Info) IsRegular() bool { return i.Type == tar.TypeReg }

// node is one entry of the tree.
type node struct {
	Info
	layer    int // last layer that wrote or touched this entry
	children map[string]*node
}

func newDir(layer int) *node {
	return &node{Info: Info{Type: tar.TypeDir, Mode: fs.ModeDir | 0o755}, layer: layer, children: map[string]*node{}}
}

// FS is a flattened image filesystem.
type FS struct {
	root   *node
	issues []string
}

// New returns an empty filesystem: just the root directory (0755, 0:0).
func New() *FS {
	return &FS{root: newDir(0)}
}

// Issues are the entries a container runtime would refuse, one sentence
// each, in the order met.
func (f *FS) Issues() []string { return f.issues }

// Clean turns a tar entry name into a clean absolute path; "" for the root.
func Clean(name string) string {
	p := path.Clean("/" + name)
	if p == "/" {
		return ""
	}
	return p
}

// Add applies hdr, the seq-th header of layer layer. Layers must be added in
// order, each one's headers in the order of its tar.
func (f *FS) Add(layer, seq int, hdr *tar.Header) {
	p := Clean(hdr.Name)
	if p == "" || hdr.Typeflag == tar.TypeXGlobalHeader {
		return
	}
	parentPath, base := path.Split(p)
	parent := f.dir(parentPath, layer)
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
	n := &node{Info: Info{
		Type: hdr.Typeflag, Mode: FileMode(hdr.Mode),
		UID: hdr.Uid, GID: hdr.Gid, Size: hdr.Size, Linkname: hdr.Linkname,
		Source: Source{layer, seq},
	}, layer: layer}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if old := parent.children[base]; old != nil && old.IsDir() {
			// A directory over a directory merges: keep the children.
			n.children = old.children
		} else {
			n.children = map[string]*node{}
		}
		n.Mode |= fs.ModeDir
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives still use TypeRegA
		n.Type = tar.TypeReg
	case tar.TypeLink:
		target := f.lookup(Clean(hdr.Linkname))
		if target == nil || !target.IsRegular() {
			f.issues = append(f.issues, fmt.Sprintf("%s is a hardlink to %s, which is not a regular file in the layers below it", p, Clean(hdr.Linkname)))
			return
		}
		c := *target
		c.layer = layer
		n = &c
	case tar.TypeSymlink:
		n.Mode |= fs.ModeSymlink
	}
	parent.children[base] = n
}

// dir returns the directory at the clean absolute path p, creating missing
// parents as directories and replacing non-directories in the way, as
// overlayfs does when an upper layer holds a directory where a lower one held
// a file or symlink. Every directory on the way is marked as touched by layer.
func (f *FS) dir(p string, layer int) *node {
	cur := f.root
	for rest := p; rest != ""; {
		var name string
		if name, rest, _ = strings.Cut(rest, "/"); name == "" {
			continue
		}
		next := cur.children[name]
		if next == nil || !next.IsDir() {
			next = newDir(layer)
			cur.children[name] = next
		}
		next.layer = layer
		cur = next
	}
	return cur
}

// hideLower removes every entry below dir that no layer from layer on wrote or
// touched (opaque directory).
func hideLower(dir *node, layer int) {
	for name, c := range dir.children {
		if c.layer < layer {
			delete(dir.children, name)
			continue
		}
		if c.IsDir() {
			hideLower(c, layer)
		}
	}
}
