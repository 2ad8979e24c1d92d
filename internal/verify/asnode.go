package verify

import (
	"archive/tar"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/rootfs"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// asNode makes an unpacked tree (dir, unpacked from t) what a node of
// platform p would present to a container, for the start-up runs:
//   - owners and modes as in the image (unpack writes everything as the
//     sandbox's root with directories 0755), each id moved to the host id
//     the sandbox maps it from (sandbox.HostID); an id it cannot map
//     becomes nobody (65534), as in a user namespace;
//   - an ELF file of another architecture cannot be executed: its
//     e_machine is set to EM_NONE, so the kernel refuses it (ENOEXEC) as a
//     node without an emulator for it would, instead of running it on the
//     host's CPU or through an emulator.
func asNode(dir string, t *rootfs.FS, p v1.Platform) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	want, known := platform.ELFOf(p)
	type entry struct {
		rel  string
		info rootfs.Info
	}
	var entries []entry
	_ = t.Walk(func(path string, n rootfs.Info) error {
		entries = append(entries, entry{strings.TrimPrefix(path, "/"), n})
		return nil
	})
	// Children before parents: a directory made read-only last.
	slices.Reverse(entries)
	for _, e := range entries {
		if e.rel == "" {
			continue
		}
		switch e.info.Type {
		case tar.TypeReg:
			if known && e.info.Mode&0o111 != 0 {
				if err := disableForeignELF(root, e.rel, want); err != nil {
					return fmt.Errorf("%s: %w", e.rel, err)
				}
			}
		case tar.TypeDir, tar.TypeSymlink:
		default:
			continue // not unpacked
		}
		uid, gid := hostID(e.info.UID), hostID(e.info.GID)
		if err := root.Lchown(e.rel, uid, gid); err != nil {
			return err
		}
		if e.info.Type == tar.TypeSymlink {
			continue
		}
		mode := e.info.Mode.Perm() | e.info.Mode&(fs.ModeSticky|fs.ModeSetgid)
		if err := root.Chmod(e.rel, mode); err != nil {
			return err
		}
	}
	return nil
}

// hostID is the host id of the image's id inside a sandbox; nobody's when
// the sandbox cannot map it.
func hostID(id int) int {
	if h, ok := sandbox.HostID(id); ok {
		return h
	}
	h, _ := sandbox.HostID(65534)
	return h
}

// disableForeignELF sets e_machine of the file at rel to EM_NONE when it is
// an ELF file for another machine than want.
func disableForeignELF(root *os.Root, rel string, want platform.ELF) error {
	f, err := root.OpenFile(rel, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var hdr [20]byte
	n, err := io.ReadFull(f, hdr[:])
	if err != nil && n < len(hdr) {
		return nil // too short to be a program
	}
	if !elfcheck.IsELF(hdr[:4]) {
		return nil
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(hdr[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	machine := elf.Machine(order.Uint16(hdr[18:20]))
	if machine == want.Machine && elf.Class(hdr[elf.EI_CLASS]) == want.Class && elf.Data(hdr[elf.EI_DATA]) == want.Data {
		return nil
	}
	_, err = f.WriteAt([]byte{0, 0}, 18)
	return err
}
