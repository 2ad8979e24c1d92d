package attest

import (
	"archive/tar"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// BaseScan finds the Go binaries of a base image in the pass that flattens
// it: give Visit to rootfs.FlattenEach, then ask Binaries. Only executable
// regular files are looked at; each one that starts with the ELF magic is
// spooled, one at a time, to TempDir and its build info read with
// debug/buildinfo. Files over elfcheck.MaxBaseBinarySize and Go binaries
// past the first elfcheck.MaxBaseGoBinaries are not read: Skipped says
// which. The zero value spools to os.TempDir. Not safe for concurrent use.
type BaseScan struct {
	TempDir string

	found   map[rootfs.Source]Binary
	order   int      // Go binaries found, replaced ones included
	skipped []string // paths, in stream order
}

// Visit is rootfs.FlattenEach's callback.
func (s *BaseScan) Visit(src rootfs.Source, p string, hdr *tar.Header, r io.Reader) error {
	if hdr.Mode&0o111 == 0 {
		return nil
	}
	if hdr.Size > elfcheck.MaxBaseBinarySize || s.order >= elfcheck.MaxBaseGoBinaries {
		magic := make([]byte, 4)
		if n, _ := io.ReadFull(r, magic); elfcheck.IsELF(magic[:n]) {
			s.skipped = append(s.skipped, p)
		}
		return nil
	}
	return elfcheck.SpoolELF(r, s.TempDir, func(f *os.File) error {
		if _, err := buildinfo.Read(f); err != nil {
			return nil // not a Go binary, or one whose build info says nothing
		}
		b, err := ReadBinary(p, f, hdr.Size)
		if err != nil {
			return fmt.Errorf("base: %w", err)
		}
		if s.found == nil {
			s.found = map[rootfs.Source]Binary{}
		}
		s.found[src] = b
		s.order++
		return nil
	})
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

// Skipped are the ELF executables Visit did not read (too large, or past
// the count bound), in the order met.
func (s *BaseScan) Skipped() []string { return slices.Clone(s.skipped) }
