package layer

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"strings"
)

// goBuildID is where the go command's build ID sits in an ELF Go binary:
// the .note.go.buildid note's file offset and bytes, and the ID itself.
type goBuildID struct {
	id   string
	off  int64  // file offset of the note
	note []byte // the note's bytes as read
}

// readGoBuildID returns the Go build ID of the ELF file r, or ok false when
// it has none the go command wrote: not ELF, no .note.go.buildid section,
// an empty ID (-ldflags=-buildid=) or one of another shape (a -buildid=
// of the user's own). The go command writes an executable's ID as four
// parts of 20 base64url characters, the last its content ID: a hash of
// the file's bytes outside the ID, which is what lets the ID stand in for
// the file's content (see sourceSums).
func readGoBuildID(r io.ReaderAt) (goBuildID, bool) {
	f, err := elf.NewFile(r)
	if err != nil {
		return goBuildID{}, false
	}
	s := f.Section(".note.go.buildid")
	if s == nil || s.Type != elf.SHT_NOTE || s.Size > 4096 {
		return goBuildID{}, false
	}
	note := make([]byte, s.Size)
	if _, err := r.ReadAt(note, int64(s.Offset)); err != nil {
		return goBuildID{}, false
	}
	id, ok := parseGoNote(note, f.ByteOrder)
	if !ok || !wellFormedBuildID(id) {
		return goBuildID{}, false
	}
	return goBuildID{id: id, off: int64(s.Offset), note: note}, true
}

// parseGoNote reads an ELF note of name "Go" and type 4 (the Go build ID).
func parseGoNote(note []byte, order binary.ByteOrder) (string, bool) {
	if len(note) < 16 {
		return "", false
	}
	namesz, descsz, typ := order.Uint32(note), order.Uint32(note[4:]), order.Uint32(note[8:])
	if namesz != 4 || typ != 4 || !bytes.Equal(note[12:16], []byte("Go\x00\x00")) || uint64(descsz) > uint64(len(note)-16) {
		return "", false
	}
	return string(note[16 : 16+descsz]), true
}

// wellFormedBuildID reports whether id has the go command's executable
// shape: actionID/actionID/contentID/contentID, 20 base64url characters
// each.
func wellFormedBuildID(id string) bool {
	parts := strings.Split(id, "/")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) != 20 {
			return false
		}
		for _, c := range p {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
