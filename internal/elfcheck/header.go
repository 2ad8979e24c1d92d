package elfcheck

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// ErrNotELF is wrapped by every error about input that is not an ELF file
// (wrong magic, unknown class or byte order, truncated header).
var ErrNotELF = errors.New("not an ELF executable")

// ARM e_flags bits (ARM ELF ABI, "ELF header" section).
const (
	armEABIMask      = 0xff000000
	armEABIVersion5  = 0x05000000
	armABIFloatSoft  = 0x200 // EF_ARM_ABI_FLOAT_SOFT
	armABIFloatHard  = 0x400 // EF_ARM_ABI_FLOAT_HARD
	elf32HeaderSize  = 52
	elf64HeaderSize  = 64
	maxProgramHeader = 0xffff // PN_XNUM: the real count lives in section 0; not supported
)

// header is the part of the ELF file header elfcheck looks at.
type header struct {
	class     elf.Class
	data      elf.Data
	osabi     elf.OSABI
	machine   elf.Machine
	flags     uint32
	phoff     uint64
	phentsize uint16
	phnum     uint16
}

// IsELF reports whether magic (the first four bytes of a file, or more)
// starts with the ELF magic number.
func IsELF(magic []byte) bool {
	return bytes.HasPrefix(magic, []byte(elf.ELFMAG))
}

// readHeader parses the ELF file header at offset 0 of r.
func readHeader(r io.ReaderAt) (header, error) {
	buf := make([]byte, elf64HeaderSize)
	n, err := r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return header{}, fmt.Errorf("read ELF header: %w", err)
	}
	buf = buf[:n]
	if !IsELF(buf) {
		return header{}, fmt.Errorf("%w (starts with %q)", ErrNotELF, buf[:min(n, 4)])
	}
	if n < elf.EI_NIDENT {
		return header{}, fmt.Errorf("%w: truncated ELF header (%d bytes)", ErrNotELF, n)
	}
	h := header{
		class: elf.Class(buf[elf.EI_CLASS]),
		data:  elf.Data(buf[elf.EI_DATA]),
		osabi: elf.OSABI(buf[elf.EI_OSABI]),
	}
	var bo binary.ByteOrder
	switch h.data {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return header{}, fmt.Errorf("%w: unknown ELF byte order %d", ErrNotELF, h.data)
	}
	switch h.class {
	case elf.ELFCLASS32:
		if n < elf32HeaderSize {
			return header{}, fmt.Errorf("%w: truncated ELF header (%d bytes)", ErrNotELF, n)
		}
		h.machine = elf.Machine(bo.Uint16(buf[18:]))
		h.phoff = uint64(bo.Uint32(buf[28:]))
		h.flags = bo.Uint32(buf[36:])
		h.phentsize = bo.Uint16(buf[42:])
		h.phnum = bo.Uint16(buf[44:])
	case elf.ELFCLASS64:
		if n < elf64HeaderSize {
			return header{}, fmt.Errorf("%w: truncated ELF header (%d bytes)", ErrNotELF, n)
		}
		h.machine = elf.Machine(bo.Uint16(buf[18:]))
		h.phoff = bo.Uint64(buf[32:])
		h.flags = bo.Uint32(buf[48:])
		h.phentsize = bo.Uint16(buf[54:])
		h.phnum = bo.Uint16(buf[56:])
	default:
		return header{}, fmt.Errorf("%w: unknown ELF class %d", ErrNotELF, h.class)
	}
	return h, nil
}

func (h header) byteOrder() binary.ByteOrder {
	if h.data == elf.ELFDATA2MSB {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// describe is the human text for h, in the spirit of file(1):
// "ELF 64-bit LSB aarch64", "ELF 32-bit LSB ARM EABI5 hard-float".
func (h header) describe() string {
	bits := "32-bit"
	if h.class == elf.ELFCLASS64 {
		bits = "64-bit"
	}
	order := "LSB"
	if h.data == elf.ELFDATA2MSB {
		order = "MSB"
	}
	s := fmt.Sprintf("ELF %s %s %s", bits, order, machineName(h.machine))
	if h.machine == elf.EM_ARM {
		if v := h.flags & armEABIMask; v != 0 {
			s += fmt.Sprintf(" EABI%d", v>>24)
		} else {
			s += " OABI"
		}
		switch {
		case h.flags&armABIFloatHard != 0:
			s += " hard-float"
		case h.flags&armABIFloatSoft != 0:
			s += " soft-float"
		}
	}
	if os := osName(h.osabi); os != "linux" {
		s += " " + os
	}
	return s
}

// Describe returns a one-line human description of the executable in r,
// e.g. "ELF 64-bit LSB aarch64", as used in mismatch messages.
func Describe(r io.ReaderAt) (string, error) {
	h, err := readHeader(r)
	if err != nil {
		return "", err
	}
	return h.describe(), nil
}

// PlatformOf returns the best guess at the platform the ELF header in r is
// for. The OS comes from EI_OSABI (SYSV and GNU both mean linux). The variant
// is empty, except for arm binaries whose header carries a float-ABI flag:
// hard-float reads as v7 (the armhf baseline), soft-float as v5 (armel). Go
// binaries carry neither flag; use [GoInfo] for their GOARM.
func PlatformOf(r io.ReaderAt) (v1.Platform, error) {
	h, err := readHeader(r)
	if err != nil {
		return v1.Platform{}, err
	}
	p, ok := h.platform()
	if !ok {
		return v1.Platform{}, fmt.Errorf("%s: no known platform", h.describe())
	}
	return p, nil
}

// elf is the part of h that tells the architecture.
func (h header) elf() platform.ELF {
	return platform.ELF{Class: h.class, Data: h.data, Machine: h.machine}
}

// platform maps h onto an OS/architecture using platform's port table.
func (h header) platform() (v1.Platform, bool) {
	arch, ok := platform.ArchOfELF(h.elf())
	if !ok {
		return v1.Platform{}, false
	}
	p := v1.Platform{OS: osName(h.osabi), Architecture: arch}
	if h.machine == elf.EM_ARM {
		switch {
		case h.flags&armABIFloatHard != 0:
			p.Variant = "v7"
		case h.flags&armABIFloatSoft != 0:
			p.Variant = "v5"
		}
	}
	return p, true
}

// machineName is the short human name of m.
func machineName(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86-64"
	case elf.EM_386:
		return "Intel 80386"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_ARM:
		return "ARM"
	case elf.EM_PPC64:
		return "PowerPC64"
	case elf.EM_PPC:
		return "PowerPC"
	case elf.EM_S390:
		return "IBM S/390"
	case elf.EM_RISCV:
		return "RISC-V"
	case elf.EM_LOONGARCH:
		return "LoongArch"
	case elf.EM_MIPS:
		return "MIPS"
	}
	if s := m.String(); strings.HasPrefix(s, "EM_") && !strings.Contains(s, "+") {
		return strings.TrimPrefix(s, "EM_")
	}
	return fmt.Sprintf("machine %d", uint16(m))
}

// osName maps EI_OSABI onto a GOOS-style name.
func osName(a elf.OSABI) string {
	switch a {
	case elf.ELFOSABI_NONE, elf.ELFOSABI_LINUX:
		return "linux"
	case elf.ELFOSABI_FREEBSD:
		return "freebsd"
	case elf.ELFOSABI_NETBSD:
		return "netbsd"
	case elf.ELFOSABI_OPENBSD:
		return "openbsd"
	case elf.ELFOSABI_SOLARIS:
		return "solaris"
	}
	if s := a.String(); strings.HasPrefix(s, "ELFOSABI_") && !strings.Contains(s, "+") {
		return strings.ToLower(strings.TrimPrefix(s, "ELFOSABI_"))
	}
	return fmt.Sprintf("osabi-%d", uint8(a))
}
