package attest

import (
	"archive/tar"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// BaseScan finds the Go binaries of a base image in the pass that flattens
// it: give Visit to rootfs.FlattenEach, then ask Binaries. Only executable
// regular files are looked at; the build info of each ELF file among them
// is read from the stream (elfcheck.InfoStreamer: nothing spooled, no file
// held, so the pass costs little more than the flattening). A binary's
// SHA256 is not computed. Go binaries past the first
// elfcheck.MaxBaseGoBinaries, and those whose build info is in the pre-Go
// 1.18 format, are not read: Skipped says which. The zero value is ready;
// not safe for concurrent use.
type BaseScan struct {
	info    elfcheck.InfoStreamer
	found   map[rootfs.Source]Binary
	order   int      // Go binaries found, replaced ones included
	skipped []string // paths, in stream order
}

// Visit is rootfs.FlattenEach's callback.
func (s *BaseScan) Visit(src rootfs.Source, p string, hdr *tar.Header, r io.Reader) error {
	if hdr.Mode&0o111 == 0 {
		return nil
	}
	if s.order >= elfcheck.MaxBaseGoBinaries {
		magic := make([]byte, 4)
		if n, _ := io.ReadFull(r, magic); elfcheck.IsELF(magic[:n]) {
			s.skipped = append(s.skipped, p)
		}
		return nil
	}
	bi, err := s.info.Read(r)
	if errors.Is(err, elfcheck.ErrOldBuildInfo) {
		s.skipped = append(s.skipped, p)
		return nil
	}
	if err != nil || bi == nil {
		return err
	}
	if s.found == nil {
		s.found = map[rootfs.Source]Binary{}
	}
	s.found[src] = Binary{Path: p, Info: bi}
	s.order++
	return nil
}

// Binaries are the Go binaries Visit found that fs (the base's flattened
// filesystem) still holds, under every path that holds one (a hard link
// is a binary of its own path), sorted by path.
func (s *BaseScan) Binaries(fs *rootfs.FS) []Binary {
	if len(s.found) == 0 {
		return nil
	}
	var out []Binary
	_ = fs.Walk(func(p string, info rootfs.Info) error {
		if b, ok := s.found[info.Source]; ok && info.IsRegular() {
			b.Path = p
			out = append(out, b)
		}
		return nil
	})
	slices.SortFunc(out, func(x, y Binary) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// Skipped are the ELF executables Visit did not read (past the count
// bound, or with pre-1.18 build info), in the order met.
func (s *BaseScan) Skipped() []string { return slices.Clone(s.skipped) }
