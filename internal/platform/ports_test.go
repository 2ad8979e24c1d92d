package platform

import (
	"debug/elf"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestELFOf(t *testing.T) {
	tests := []struct {
		in   string
		want ELF
	}{
		{"linux/amd64", ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64}},
		{"linux/amd64/v3", ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64}},
		{"linux/386", ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386}},
		{"linux/arm64", ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_AARCH64}},
		{"linux/arm/v6", ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_ARM}},
		{"linux/ppc64le", ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_PPC64}},
		{"linux/ppc64", ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_PPC64}},
		{"linux/s390x", ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_S390}},
		{"linux/riscv64", ELF{elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_RISCV}},
		{"linux/mipsle", ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_MIPS}},
		{"linux/mips64", ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_MIPS}},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		require.NoError(t, err)
		got, ok := ELFOf(p)
		require.True(t, ok, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
		arch, ok := ArchOfELF(got)
		require.True(t, ok, tt.in)
		assert.Equal(t, p.Architecture, arch, "ArchOfELF reverses ELFOf for %s", tt.in)
	}
	_, ok := ELFOf(v1.Platform{OS: "linux", Architecture: "aarch64"})
	assert.True(t, ok, "an alias is normalised first")
	for _, p := range []v1.Platform{{OS: "windows", Architecture: "amd64"}, {OS: "linux", Architecture: "sparc64"}, {}} {
		_, ok := ELFOf(p)
		assert.False(t, ok, Format(p))
	}
	_, ok = ArchOfELF(ELF{elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_PPC})
	assert.False(t, ok, "32-bit PowerPC is no Go port")
	_, ok = ArchOfELF(ELF{elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_X86_64})
	assert.False(t, ok, "a big-endian x86-64 is no Go port")
}

// Every port has ELF facts no other port shares, so a header names one
// architecture, and a qemu-user name.
func TestPortsAreComplete(t *testing.T) {
	seen := map[ELF]string{}
	for _, p := range Known() {
		if IsWindows(p) {
			m, ok := PEMachineOf(p)
			require.True(t, ok, Format(p))
			arch, ok := ArchOfPE(m)
			require.True(t, ok, Format(p))
			assert.Equal(t, p.Architecture, arch, "ArchOfPE reverses PEMachineOf for %s", Format(p))
			_, ok = QemuArch(p)
			assert.False(t, ok, "qemu-user runs no Windows program: %s", Format(p))
			continue
		}
		e, ok := ELFOf(p)
		require.True(t, ok, Format(p))
		if other, dup := seen[e]; dup && other != p.Architecture {
			t.Errorf("%s and %s share the ELF header %v", other, p.Architecture, e)
		}
		seen[e] = p.Architecture
		q, ok := QemuArch(p)
		require.True(t, ok, Format(p))
		assert.NotEmpty(t, q, Format(p))
	}
}

func TestQemuArch(t *testing.T) {
	for in, want := range map[string]string{
		"linux/amd64": "x86_64", "linux/amd64/v2": "x86_64", "linux/arm64": "aarch64", "linux/arm/v7": "arm", "linux/arm/v5": "arm",
		"linux/ppc64le": "ppc64le", "linux/ppc64": "ppc64", "linux/s390x": "s390x", "linux/riscv64": "riscv64",
		"linux/386": "i386", "linux/mips": "mips", "linux/mipsle": "mipsel", "linux/mips64": "mips64",
		"linux/mips64le": "mips64el", "linux/loong64": "loongarch64",
	} {
		p, err := Parse(in)
		require.NoError(t, err)
		got, ok := QemuArch(p)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := QemuArch(v1.Platform{OS: "linux", Architecture: "sparc64"})
	assert.False(t, ok)
	_, ok = QemuArch(v1.Platform{OS: "windows", Architecture: "amd64"})
	assert.False(t, ok, "qemu-user runs Linux programs only")
}

func TestKnownIsSorted(t *testing.T) {
	known := Known()
	for i := 1; i < len(known); i++ {
		a, b := known[i-1], known[i]
		if a.Architecture != b.Architecture {
			assert.Less(t, Format(a), Format(b), "ports are in the order of their os/arch strings")
		}
	}
	assert.Len(t, known, 20, "13 Linux ports, amd64 with 3 more levels and arm with 3 variants for 1, and 2 Windows ports")
}

func TestIsTargetVar(t *testing.T) {
	for _, name := range []string{"GOOS", "GOARCH", "GOARM", "GOAMD64", "GO386", "GOARM64", "GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM"} {
		assert.True(t, IsTargetVar(name), name)
	}
	for _, name := range []string{"CGO_ENABLED", "GOFLAGS", "GOPATH", "goarch", "GOARCH ", ""} {
		assert.False(t, IsTargetVar(name), name)
	}
	// Every variable GoEnv sets is one that nothing else may set.
	for _, p := range Known() {
		env, err := GoEnv(p)
		require.NoError(t, err)
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			assert.True(t, IsTargetVar(name), "%s sets %s", Format(p), name)
		}
	}
}

func TestFromGoBuild(t *testing.T) {
	tests := []struct {
		goos, goarch, goarm, goamd64 string
		want                         string
	}{
		{"linux", "arm", "7", "", "linux/arm/v7"},
		{"linux", "arm", "6", "", "linux/arm/v6"},
		{"linux", "arm", "7,softfloat", "", "linux/arm/v7"},
		{"linux", "arm", "", "", "linux/arm"},
		{"linux", "amd64", "", "v1", "linux/amd64"},
		{"linux", "amd64", "", "v3", "linux/amd64/v3"},
		{"linux", "amd64", "", "", "linux/amd64"},
		{"linux", "arm64", "7", "v3", "linux/arm64"},
		{"", "", "", "", "/"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Format(FromGoBuild(tt.goos, tt.goarch, tt.goarm, tt.goamd64)), "%+v", tt)
	}
	// FromGoBuild reads GoEnv backwards for every platform GoEnv knows.
	for _, p := range Known() {
		env, err := GoEnv(p)
		require.NoError(t, err)
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		got := FromGoBuild(vars["GOOS"], vars["GOARCH"], vars["GOARM"], vars["GOAMD64"])
		assert.True(t, Equal(p, got), "%s -> %v -> %s", Format(p), env, Format(got))
	}
}
