package elfcheck

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
)

// Static reports whether the executable in r is statically linked: it has no
// PT_INTERP program header and its dynamic segment, if any, has no DT_NEEDED
// entry. A static-pie binary (PT_DYNAMIC for relocations only) is static.
func Static(r io.ReaderAt) (bool, error) {
	h, err := readHeader(r)
	if err != nil {
		return false, err
	}
	return static(r, h)
}

func static(r io.ReaderAt, h header) (bool, error) {
	if h.phnum == maxProgramHeader {
		return false, fmt.Errorf("%s: %d or more program headers (PN_XNUM) not supported", h.describe(), maxProgramHeader)
	}
	size := 32 // Elf32_Phdr
	if h.class == elf.ELFCLASS64 {
		size = 56 // Elf64_Phdr
	}
	if h.phnum > 0 && int(h.phentsize) < size {
		return false, fmt.Errorf("%s: program header entry size %d, want at least %d", h.describe(), h.phentsize, size)
	}
	bo := h.byteOrder()
	buf := make([]byte, size)
	for i := range uint64(h.phnum) {
		off := h.phoff + i*uint64(h.phentsize)
		if off > 1<<62 {
			return false, fmt.Errorf("%s: program header %d at offset %#x out of range", h.describe(), i, off)
		}
		if n, err := r.ReadAt(buf, int64(off)); n < len(buf) {
			return false, fmt.Errorf("%s: program header %d at offset %#x: %w", h.describe(), i, off, err)
		}
		var offset, filesz uint64
		typ := elf.ProgType(bo.Uint32(buf))
		if h.class == elf.ELFCLASS64 {
			offset, filesz = bo.Uint64(buf[8:]), bo.Uint64(buf[32:])
		} else {
			offset, filesz = uint64(bo.Uint32(buf[4:])), uint64(bo.Uint32(buf[16:]))
		}
		switch typ {
		case elf.PT_INTERP:
			return false, nil
		case elf.PT_DYNAMIC:
			needed, err := hasNeeded(r, h, offset, filesz)
			if err != nil {
				return false, fmt.Errorf("%s: dynamic segment: %w", h.describe(), err)
			}
			if needed {
				return false, nil
			}
		}
	}
	return true, nil
}

// hasNeeded scans the dynamic segment at [offset, offset+size) for DT_NEEDED,
// stopping at DT_NULL or at the end of the segment or file.
func hasNeeded(r io.ReaderAt, h header, offset, size uint64) (bool, error) {
	if offset > 1<<62 || size > 1<<62 {
		return false, fmt.Errorf("offset %#x size %#x out of range", offset, size)
	}
	entry := 8 // Elf32_Dyn
	if h.class == elf.ELFCLASS64 {
		entry = 16 // Elf64_Dyn
	}
	bo := h.byteOrder()
	br := bufio.NewReader(io.NewSectionReader(r, int64(offset), int64(size)))
	buf := make([]byte, entry)
	for {
		if _, err := io.ReadFull(br, buf); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return false, nil
			}
			return false, err
		}
		var tag int64
		if entry == 16 {
			tag = int64(bo.Uint64(buf))
		} else {
			tag = int64(int32(bo.Uint32(buf)))
		}
		switch elf.DynTag(tag) {
		case elf.DT_NULL:
			return false, nil
		case elf.DT_NEEDED:
			return true, nil
		}
	}
}
