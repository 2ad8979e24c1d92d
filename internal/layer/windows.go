package layer

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Windows file attributes the layer's MSWINDOWS.fileattr records carry
// (winnt.h).
const (
	fileAttributeDirectory = 0x10
	fileAttributeArchive   = 0x20
)

// windowsPlan turns planned (Linux-style) entries into a Windows layer's:
// each path moved under /Files, the /Files and /Hives directories added.
// A symlink is refused: Windows links need reparse-point records this
// writer does not produce.
func windowsPlan(planned []rootfs.Entry) ([]rootfs.Entry, error) {
	out := make([]rootfs.Entry, 0, len(planned)+2)
	out = append(out, rootfs.Entry{Path: "/Files", Kind: rootfs.Dir, Mode: 0o555})
	for _, e := range planned {
		if e.Kind == rootfs.Symlink {
			return nil, fmt.Errorf("layer entry %q: a Windows layer cannot hold a symlink; copy the file instead", e.Path)
		}
		e.Path = "/Files" + e.Path
		e.UID, e.GID = 0, 0
		out = append(out, e)
	}
	// "/Hives" sorts after every "/Files/..." path, as plan would put it.
	return append(out, rootfs.Entry{Path: "/Hives", Kind: rootfs.Dir, Mode: 0o555}), nil
}

// windowsRecords are the PAX records of one Windows layer entry of kind k.
func windowsRecords(k rootfs.Kind) map[string]string {
	attr := fileAttributeArchive
	if k == rootfs.Dir {
		attr = fileAttributeDirectory
	}
	return map[string]string{
		"MSWINDOWS.rawsd":    builtinUsersSD,
		"MSWINDOWS.fileattr": strconv.Itoa(attr),
	}
}

// builtinUsersSD is the base64 of a self-relative Windows security
// descriptor whose owner and group are BUILTIN\Users (S-1-5-32-545, SDDL
// "O:BUG:BU") and which has no ACLs: the descriptor Windows needs on a
// binary a container user may run (go-containerregistry and ko write the same).
var builtinUsersSD = base64.StdEncoding.EncodeToString(selfRelativeSD(builtinUsersSID(), builtinUsersSID()))

// builtinUsersSID is the binary SID S-1-5-32-545: revision 1, two
// sub-authorities, identifier authority 5 (NT), sub-authorities 32
// (BUILTIN) and 545 (Users), little-endian.
func builtinUsersSID() []byte {
	sid := []byte{1, 2, 0, 0, 0, 0, 0, 5}
	sid = binary.LittleEndian.AppendUint32(sid, 32)
	return binary.LittleEndian.AppendUint32(sid, 545)
}

// selfRelativeSD lays out a SECURITY_DESCRIPTOR_RELATIVE: revision 1,
// control SE_SELF_RELATIVE, owner and group offsets, no SACL or DACL,
// followed by the two SIDs.
func selfRelativeSD(owner, group []byte) []byte {
	const headerSize = 20
	const seSelfRelative = 0x8000
	sd := []byte{1, 0}
	sd = binary.LittleEndian.AppendUint16(sd, seSelfRelative)
	sd = binary.LittleEndian.AppendUint32(sd, headerSize)                    // owner
	sd = binary.LittleEndian.AppendUint32(sd, headerSize+uint32(len(owner))) // group
	sd = binary.LittleEndian.AppendUint32(sd, 0)                             // SACL
	sd = binary.LittleEndian.AppendUint32(sd, 0)                             // DACL
	sd = append(sd, owner...)
	return append(sd, group...)
}
