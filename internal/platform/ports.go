package platform

import (
	"debug/elf"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// port is what helperbuild knows about one Linux port of Go: the GOARCH, the
// variants GoEnv maps, what the ELF header of its executables holds and what
// qemu-user calls the architecture.
type port struct {
	arch     string
	variants []string // "" is no variant; nil means only ""
	elf      ELF
	qemu     string
}

// ports are the GOOS/GOARCH pairs helperbuild builds container images for:
// the Linux ports of `go tool dist list` that have container runtimes, in
// the order of their os/arch strings.
var ports = []port{
	{"386", nil, ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386}, "i386"},
	{"amd64", []string{"", "v2", "v3", "v4"}, ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64}, "x86_64"},
	{"arm", []string{"v5", "v6", "v7"}, ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_ARM}, "arm"},
	{"arm64", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_AARCH64}, "aarch64"},
	{"loong64", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_LOONGARCH}, "loongarch64"},
	{"mips", nil, ELF{elf.ELFCLASS32, elf.ELFDATA2MSB, elf.EM_MIPS}, "mips"},
	{"mips64", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_MIPS}, "mips64"},
	{"mips64le", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_MIPS}, "mips64el"},
	{"mipsle", nil, ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_MIPS}, "mipsel"},
	{"ppc64", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_PPC64}, "ppc64"},
	{"ppc64le", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_PPC64}, "ppc64le"},
	{"riscv64", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_RISCV}, "riscv64"},
	{"s390x", nil, ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_S390}, "s390x"},
}

// portOf returns the port of p's architecture; ok is false unless p's OS is
// linux and Go has a Linux port for the architecture.
func portOf(p v1.Platform) (port, bool) {
	if p.OS != "linux" {
		return port{}, false
	}
	i := slices.IndexFunc(ports, func(q port) bool { return q.arch == p.Architecture })
	if i < 0 {
		return port{}, false
	}
	return ports[i], true
}

// Known lists every platform GoEnv accepts, variants included, sorted, the
// Linux ports first and then windows/amd64 and windows/arm64 (without an OS
// version: that comes from a Windows base): for callers that must name
// something per platform before they know which platforms a base offers.
func Known() []v1.Platform {
	var out []v1.Platform
	for _, q := range ports {
		vs := q.variants
		if vs == nil {
			vs = []string{""}
		}
		for _, v := range vs {
			out = append(out, v1.Platform{OS: "linux", Architecture: q.arch, Variant: v})
		}
	}
	for _, q := range windowsPorts {
		out = append(out, v1.Platform{OS: "windows", Architecture: q.arch})
	}
	return out
}

// ELF is what the header of a Linux executable for one architecture holds:
// word size, byte order and machine.
type ELF struct {
	Class   elf.Class
	Data    elf.Data
	Machine elf.Machine
}

// ELFOf returns the ELF header fields of a Linux executable for p's
// architecture (the variant does not show in them); ok is false for a
// platform that is not a Linux port of Go.
func ELFOf(p v1.Platform) (ELF, bool) {
	q, ok := portOf(Normalize(p))
	return q.elf, ok
}

// ArchOfELF returns the GOARCH whose Linux executables carry e; ok is false
// when no Go port does.
func ArchOfELF(e ELF) (string, bool) {
	for _, q := range ports {
		if q.elf == e {
			return q.arch, true
		}
	}
	return "", false
}

// QemuArch returns qemu-user's name for p's architecture ("aarch64" for
// arm64, as in qemu-aarch64-static); ok is false for a platform that is not
// a Linux port of Go.
func QemuArch(p v1.Platform) (string, bool) {
	q, ok := portOf(Normalize(p))
	return q.qemu, ok
}
