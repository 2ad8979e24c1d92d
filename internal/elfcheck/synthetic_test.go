package elfcheck_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// synthELF describes a minimal ELF file: a header, program headers and the
// bytes each program header points at. It has no sections.
type synthELF struct {
	class   elf.Class
	data    elf.Data
	osabi   elf.OSABI
	machine elf.Machine
	flags   uint32
	progs   []synthProg
}

type synthProg struct {
	typ     elf.ProgType
	content []byte
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (s synthELF) order() byteOrder {
	if s.data == elf.ELFDATA2MSB {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func (s synthELF) bytes() []byte {
	bo := s.order()
	is64 := s.class == elf.ELFCLASS64
	ehsize, phsize := 52, 32
	if is64 {
		ehsize, phsize = 64, 56
	}
	out := make([]byte, ehsize+phsize*len(s.progs))
	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS], out[elf.EI_DATA], out[elf.EI_VERSION], out[elf.EI_OSABI] = byte(s.class), byte(s.data), 1, byte(s.osabi)
	bo.PutUint16(out[16:], uint16(elf.ET_EXEC))
	bo.PutUint16(out[18:], uint16(s.machine))
	bo.PutUint32(out[20:], 1)
	if is64 {
		bo.PutUint64(out[32:], uint64(ehsize))
		bo.PutUint32(out[48:], s.flags)
		bo.PutUint16(out[52:], uint16(ehsize))
		bo.PutUint16(out[54:], uint16(phsize))
		bo.PutUint16(out[56:], uint16(len(s.progs)))
	} else {
		bo.PutUint32(out[28:], uint32(ehsize))
		bo.PutUint32(out[36:], s.flags)
		bo.PutUint16(out[40:], uint16(ehsize))
		bo.PutUint16(out[42:], uint16(phsize))
		bo.PutUint16(out[44:], uint16(len(s.progs)))
	}
	for i, p := range s.progs {
		ph := out[ehsize+i*phsize:]
		off := uint64(len(out))
		bo.PutUint32(ph, uint32(p.typ))
		if is64 {
			bo.PutUint64(ph[8:], off)
			bo.PutUint64(ph[32:], uint64(len(p.content)))
		} else {
			bo.PutUint32(ph[4:], uint32(off))
			bo.PutUint32(ph[16:], uint32(len(p.content)))
		}
		out = append(out, p.content...)
	}
	return out
}

// dynamic encodes (tag, value) pairs as the entries of a dynamic segment.
func (s synthELF) dynamic(tags ...elf.DynTag) []byte {
	bo := s.order()
	var out []byte
	for _, tag := range tags {
		if s.class == elf.ELFCLASS64 {
			out = bo.AppendUint64(out, uint64(tag))
			out = bo.AppendUint64(out, 0)
		} else {
			out = bo.AppendUint32(out, uint32(tag))
			out = bo.AppendUint32(out, 0)
		}
	}
	return out
}

func arm(flags uint32, progs ...synthProg) synthELF {
	return synthELF{class: elf.ELFCLASS32, data: elf.ELFDATA2LSB, machine: elf.EM_ARM, flags: flags, progs: progs}
}

func elf64(m elf.Machine, d elf.Data) synthELF {
	return synthELF{class: elf.ELFCLASS64, data: d, machine: m}
}

var interp = synthProg{typ: elf.PT_INTERP, content: []byte("/lib/ld-linux.so.3\x00")}

func TestCheckSyntheticHeaders(t *testing.T) {
	const (
		eabi5 = 0x05000000
		hard  = 0x400
		soft  = 0x200
	)
	lsb, msb := elf.ELFDATA2LSB, elf.ELFDATA2MSB
	tests := []struct {
		name     string
		elf      synthELF
		target   string
		describe string
		got      string // PlatformOf; "" means unknown
		wantErr  string
	}{
		{name: "Go arm header fits v5", elf: arm(eabi5 | 2), target: "linux/arm/v5", describe: "ELF 32-bit LSB ARM EABI5", got: "linux/arm"},
		{name: "armhf fits v7", elf: arm(eabi5 | hard), target: "linux/arm/v7", describe: "ELF 32-bit LSB ARM EABI5 hard-float", got: "linux/arm/v7"},
		{name: "armhf fits v6", elf: arm(eabi5|hard, interp), target: "linux/arm/v6", describe: "ELF 32-bit LSB ARM EABI5 hard-float", got: "linux/arm/v7"},
		{name: "armhf not v5", elf: arm(eabi5 | hard), target: "linux/arm/v5", describe: "ELF 32-bit LSB ARM EABI5 hard-float", got: "linux/arm/v7",
			wantErr: "binary is ELF 32-bit LSB ARM EABI5 hard-float (linux/arm/v7), not linux/arm/v5: hard-float code needs a VFP unit, which arm/v5 does not promise"},
		{name: "static armel fits v7", elf: arm(eabi5 | soft), target: "linux/arm/v7", describe: "ELF 32-bit LSB ARM EABI5 soft-float", got: "linux/arm/v5"},
		{name: "dynamic armel fits v5", elf: arm(eabi5|soft, interp), target: "linux/arm/v5", describe: "ELF 32-bit LSB ARM EABI5 soft-float", got: "linux/arm/v5"},
		{name: "dynamic armel not v7", elf: arm(eabi5|soft, interp), target: "linux/arm/v7", describe: "ELF 32-bit LSB ARM EABI5 soft-float", got: "linux/arm/v5",
			wantErr: "binary is ELF 32-bit LSB ARM EABI5 soft-float (linux/arm/v5), not linux/arm/v7: a dynamically linked soft-float (armel) binary does not run on a hard-float (armhf) userland"},
		{name: "arm OABI", elf: arm(0), target: "linux/arm/v7", describe: "ELF 32-bit LSB ARM OABI", got: "linux/arm",
			wantErr: "binary is ELF 32-bit LSB ARM OABI (linux/arm), not linux/arm/v7: want ARM EABI version 5, e_flags are 0x0"},
		{name: "x32 is not amd64", elf: synthELF{class: elf.ELFCLASS32, data: lsb, machine: elf.EM_X86_64}, target: "linux/amd64", describe: "ELF 32-bit LSB x86-64",
			wantErr: "binary is ELF 32-bit LSB x86-64 (unknown platform), not linux/amd64"},
		{name: "ppc64 big endian is not ppc64le", elf: elf64(elf.EM_PPC64, msb), target: "linux/ppc64le", describe: "ELF 64-bit MSB PowerPC64", got: "linux/ppc64",
			wantErr: "binary is ELF 64-bit MSB PowerPC64 (linux/ppc64), not linux/ppc64le"},
		{name: "ppc64", elf: elf64(elf.EM_PPC64, msb), target: "linux/ppc64", describe: "ELF 64-bit MSB PowerPC64", got: "linux/ppc64"},
		{name: "loong64", elf: elf64(elf.EM_LOONGARCH, lsb), target: "linux/loong64", describe: "ELF 64-bit LSB LoongArch", got: "linux/loong64"},
		{name: "mips64le", elf: elf64(elf.EM_MIPS, lsb), target: "linux/mips64le", describe: "ELF 64-bit LSB MIPS", got: "linux/mips64le"},
		{name: "mips64 is not mips64le", elf: elf64(elf.EM_MIPS, msb), target: "linux/mips64le", describe: "ELF 64-bit MSB MIPS", got: "linux/mips64",
			wantErr: "binary is ELF 64-bit MSB MIPS (linux/mips64), not linux/mips64le"},
		{name: "mipsle", elf: synthELF{class: elf.ELFCLASS32, data: lsb, machine: elf.EM_MIPS}, target: "linux/mipsle", describe: "ELF 32-bit LSB MIPS", got: "linux/mipsle"},
		{name: "s390 31-bit is not s390x", elf: synthELF{class: elf.ELFCLASS32, data: msb, machine: elf.EM_S390}, target: "linux/s390x", describe: "ELF 32-bit MSB IBM S/390",
			wantErr: "binary is ELF 32-bit MSB IBM S/390 (unknown platform), not linux/s390x"},
		{name: "GNU OSABI is linux", elf: synthELF{class: elf.ELFCLASS64, data: lsb, machine: elf.EM_AARCH64, osabi: elf.ELFOSABI_LINUX}, target: "linux/arm64", describe: "ELF 64-bit LSB aarch64", got: "linux/arm64"},
		{name: "FreeBSD is not linux", elf: synthELF{class: elf.ELFCLASS64, data: lsb, machine: elf.EM_X86_64, osabi: elf.ELFOSABI_FREEBSD}, target: "linux/amd64", describe: "ELF 64-bit LSB x86-64 freebsd", got: "freebsd/amd64",
			wantErr: "binary is ELF 64-bit LSB x86-64 freebsd (freebsd/amd64), not linux/amd64"},
		{name: "unknown machine", elf: elf64(elf.EM_SPARCV9, msb), target: "linux/s390x", describe: "ELF 64-bit MSB SPARCV9",
			wantErr: "binary is ELF 64-bit MSB SPARCV9 (unknown platform), not linux/s390x"},
		{name: "unnamed machine", elf: elf64(elf.Machine(0x7777), lsb), target: "linux/amd64", describe: "ELF 64-bit LSB machine 30583",
			wantErr: "binary is ELF 64-bit LSB machine 30583 (unknown platform), not linux/amd64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bytes.NewReader(tt.elf.bytes())
			desc, err := elfcheck.Describe(r)
			require.NoError(t, err)
			assert.Equal(t, tt.describe, desc)

			got, err := elfcheck.PlatformOf(r)
			if tt.got == "" {
				assert.EqualError(t, err, tt.describe+": no known platform")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.got, platform.Format(got))
			}

			err = elfcheck.Check(r, v1.Platform{OS: "linux", Architecture: mustParseLoose(tt.target).Architecture, Variant: mustParseLoose(tt.target).Variant})
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			var mm *elfcheck.MismatchError
			require.ErrorAs(t, err, &mm)
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

// mustParseLoose splits os/arch[/variant] without platform.Parse's
// buildability rule, so arm/v5 and mips ports can be named.
func mustParseLoose(s string) v1.Platform {
	parts := bytes.Split([]byte(s), []byte("/"))
	p := v1.Platform{OS: string(parts[0]), Architecture: string(parts[1])}
	if len(parts) > 2 {
		p.Variant = string(parts[2])
	}
	return p
}

func TestStaticSynthetic(t *testing.T) {
	e64 := elf64(elf.EM_X86_64, elf.ELFDATA2LSB)
	e32 := arm(0x05000000)
	tests := []struct {
		name   string
		elf    synthELF
		static bool
	}{
		{name: "no program headers", elf: e64, static: true},
		{name: "PT_INTERP", elf: withProgs(e64, interp), static: false},
		{name: "static-pie: PT_DYNAMIC without DT_NEEDED", elf: withProgs(e64, synthProg{elf.PT_DYNAMIC, e64.dynamic(elf.DT_RELA, elf.DT_FLAGS_1, elf.DT_NULL)}), static: true},
		{name: "DT_NEEDED", elf: withProgs(e64, synthProg{elf.PT_DYNAMIC, e64.dynamic(elf.DT_HASH, elf.DT_NEEDED, elf.DT_NULL)}), static: false},
		{name: "DT_NEEDED after DT_NULL is ignored", elf: withProgs(e64, synthProg{elf.PT_DYNAMIC, e64.dynamic(elf.DT_NULL, elf.DT_NEEDED)}), static: true},
		{name: "DT_NEEDED 32-bit", elf: withProgs(e32, synthProg{elf.PT_DYNAMIC, e32.dynamic(elf.DT_NEEDED, elf.DT_NULL)}), static: false},
		{name: "DT_NEEDED 64-bit big endian", elf: withProgs(elf64(elf.EM_S390, elf.ELFDATA2MSB), synthProg{elf.PT_DYNAMIC, elf64(elf.EM_S390, elf.ELFDATA2MSB).dynamic(elf.DT_NEEDED)}), static: false},
		{name: "truncated dynamic entry", elf: withProgs(e64, synthProg{elf.PT_DYNAMIC, e64.dynamic(elf.DT_NEEDED)[:12]}), static: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			static, err := elfcheck.Static(bytes.NewReader(tt.elf.bytes()))
			require.NoError(t, err)
			assert.Equal(t, tt.static, static)
		})
	}

	// Program headers beyond the end of the file are an error, not ErrNotELF.
	b := withProgs(e64, interp).bytes()
	_, err := elfcheck.Static(bytes.NewReader(b[:70]))
	require.Error(t, err)
	assert.NotErrorIs(t, err, elfcheck.ErrNotELF)
	assert.ErrorContains(t, err, "ELF 64-bit LSB x86-64: program header 0 at offset 0x40")
}

func withProgs(s synthELF, progs ...synthProg) synthELF {
	s.progs = progs
	return s
}

func TestGoInfoNotGo(t *testing.T) {
	info, ok, err := elfcheck.GoInfo(bytes.NewReader(elf64(elf.EM_X86_64, elf.ELFDATA2LSB).bytes()))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, info)
}
