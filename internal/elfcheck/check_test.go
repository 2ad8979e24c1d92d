package elfcheck_test

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

func TestCheckCrossBuiltBinaries(t *testing.T) {
	bins, _ := builtBinaries(t)
	describe := map[string]string{
		"linux/amd64":   "ELF 64-bit LSB x86-64",
		"linux/arm64":   "ELF 64-bit LSB aarch64",
		"linux/arm/v6":  "ELF 32-bit LSB ARM EABI5",
		"linux/arm/v7":  "ELF 32-bit LSB ARM EABI5",
		"linux/ppc64le": "ELF 64-bit LSB PowerPC64",
		"linux/s390x":   "ELF 64-bit MSB IBM S/390",
		"linux/riscv64": "ELF 64-bit LSB RISC-V",
		"linux/386":     "ELF 32-bit LSB Intel 80386",
	}
	// What PlatformOf can see: no variant, since Go sets no ARM float flag.
	headerPlatform := map[string]string{"linux/arm/v6": "linux/arm", "linux/arm/v7": "linux/arm"}
	for _, built := range crossPlatforms {
		t.Run(built, func(t *testing.T) {
			f := open(t, bins[built])
			desc, err := elfcheck.Describe(f)
			require.NoError(t, err)
			assert.Equal(t, describe[built], desc)

			got, err := elfcheck.PlatformOf(f)
			require.NoError(t, err)
			wantGot := built
			if s, ok := headerPlatform[built]; ok {
				wantGot = s
			}
			assert.Equal(t, wantGot, platform.Format(got))

			static, err := elfcheck.Static(f)
			require.NoError(t, err)
			assert.True(t, static, "CGO_ENABLED=0 binary must be static")

			for _, target := range crossPlatforms {
				p := testkit.Platform(t, target)
				err := elfcheck.CheckFile(bins[built], p)
				sameArch := testkit.Platform(t, built).Architecture == p.Architecture
				if sameArch {
					// arm/v6 vs arm/v7 is invisible in the header; CheckGo tells them apart.
					assert.NoError(t, err, "%s binary checked as %s", built, target)
					continue
				}
				var mm *elfcheck.MismatchError
				require.ErrorAs(t, err, &mm, "%s binary checked as %s", built, target)
				assert.Equal(t, bins[built]+": binary is "+describe[built]+" ("+wantGot+"), not "+target, err.Error())
				assert.Equal(t, target, platform.Format(mm.Want))
			}
		})
	}
}

func TestGoInfoAndCheckGo(t *testing.T) {
	bins, _ := builtBinaries(t)
	for _, built := range crossPlatforms {
		t.Run(built, func(t *testing.T) {
			info, ok, err := elfcheck.GoInfo(open(t, bins[built]))
			require.NoError(t, err)
			require.True(t, ok)
			want := testkit.Platform(t, built)
			assert.Equal(t, "linux", info.GOOS)
			assert.Equal(t, want.Architecture, info.GOARCH)
			assert.Equal(t, "0", info.CGOEnabled)
			assert.Equal(t, "example.com/hello", info.Path)
			assert.Equal(t, runtime.Version(), info.GoVersion)
			assert.Equal(t, built, platform.Format(info.Platform()))

			for _, target := range crossPlatforms {
				err := elfcheck.CheckGo(info, testkit.Platform(t, target))
				if target == built {
					assert.NoError(t, err)
					continue
				}
				var mm *elfcheck.MismatchError
				require.ErrorAs(t, err, &mm, "%s binary checked as %s", built, target)
				assert.Contains(t, err.Error(), "binary is a Go build for "+built+" (GOOS=linux GOARCH="+want.Architecture)
				assert.Contains(t, err.Error(), ", not "+target)
			}
		})
	}

	// The headline case: same ELF header, different GOARM.
	info, _, err := elfcheck.GoInfo(open(t, bins["linux/arm/v6"]))
	require.NoError(t, err)
	assert.Equal(t, "6", info.GOARM)
	assert.EqualError(t, elfcheck.CheckGo(info, testkit.Platform(t, "linux/arm/v7")),
		"binary is a Go build for linux/arm/v6 (GOOS=linux GOARCH=arm GOARM=6), not linux/arm/v7")
}

func TestCheckGoSettings(t *testing.T) {
	tests := []struct {
		name    string
		info    elfcheck.GoBuild
		target  string
		wantErr string
	}{
		{name: "amd64 v1 is plain amd64", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "amd64", GOAMD64: "v1"}, target: "linux/amd64"},
		{name: "amd64 v3", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "amd64", GOAMD64: "v3"}, target: "linux/amd64/v3"},
		{name: "amd64 v1 is not v3", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "amd64", GOAMD64: "v1"}, target: "linux/amd64/v3",
			wantErr: "binary is a Go build for linux/amd64 (GOOS=linux GOARCH=amd64 GOAMD64=v1), not linux/amd64/v3"},
		{name: "amd64 v3 is not plain amd64", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "amd64", GOAMD64: "v3"}, target: "linux/amd64",
			wantErr: "binary is a Go build for linux/amd64/v3 (GOOS=linux GOARCH=amd64 GOAMD64=v3), not linux/amd64"},
		{name: "linux/arm means v7", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "arm", GOARM: "7"}, target: "linux/arm"},
		{name: "GOARM with float mode", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "arm", GOARM: "7,softfloat"}, target: "linux/arm/v7"},
		{name: "GOARM 5", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "arm", GOARM: "5"}, target: "linux/arm/v6",
			wantErr: "binary is a Go build for linux/arm/v5 (GOOS=linux GOARCH=arm GOARM=5), not linux/arm/v6"},
		{name: "GOARM not recorded", info: elfcheck.GoBuild{GOOS: "linux", GOARCH: "arm"}, target: "linux/arm/v6"},
		{name: "other OS", info: elfcheck.GoBuild{GOOS: "freebsd", GOARCH: "arm64"}, target: "linux/arm64",
			wantErr: "binary is a Go build for freebsd/arm64 (GOOS=freebsd GOARCH=arm64), not linux/arm64"},
		{name: "only GOARCH recorded", info: elfcheck.GoBuild{GOARCH: "arm64"}, target: "linux/riscv64",
			wantErr: "binary is a Go build (GOARCH=arm64), not linux/riscv64"},
		{name: "nothing recorded", info: elfcheck.GoBuild{}, target: "linux/s390x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := elfcheck.CheckGo(&tt.info, testkit.Platform(t, tt.target))
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
		})
	}
	assert.ErrorContains(t, elfcheck.CheckGo(nil, testkit.Platform(t, "linux/amd64")), "no Go build info")
}

func TestDynamicBinary(t *testing.T) {
	_, dynamic := builtBinaries(t)
	require.NotEmpty(t, dynamic, "the dynamic cgo binary")
	f := open(t, dynamic)
	static, err := elfcheck.Static(f)
	require.NoError(t, err)
	assert.False(t, static, "cgo binary using os/user and net must need libc")

	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	require.NoError(t, elfcheck.Check(f, host))
	info, ok, err := elfcheck.GoInfo(f)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "1", info.CGOEnabled)
	assert.NoError(t, elfcheck.CheckGo(info, host))
}

func TestNotELF(t *testing.T) {
	inputs := map[string][]byte{
		"empty":         nil,
		"short":         []byte("\x7fEL"),
		"script":        []byte("#!/bin/sh\necho hi\n"),
		"magic only":    []byte("\x7fELF"),
		"bad class":     append([]byte("\x7fELF\x03\x01\x01"), make([]byte, 60)...),
		"bad data":      append([]byte("\x7fELF\x02\x03\x01"), make([]byte, 60)...),
		"short elf64":   append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 40)...),
		"short elf32":   append([]byte("\x7fELF\x01\x01\x01"), make([]byte, 30)...),
		"gzip":          {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0},
		"mach-o 64-bit": {0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1},
	}
	p := v1.Platform{OS: "linux", Architecture: "amd64"}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			r := bytes.NewReader(in)
			assert.ErrorIs(t, elfcheck.Check(r, p), elfcheck.ErrNotELF)
			_, err := elfcheck.Describe(r)
			assert.ErrorIs(t, err, elfcheck.ErrNotELF)
			_, err = elfcheck.PlatformOf(r)
			assert.ErrorIs(t, err, elfcheck.ErrNotELF)
			_, err = elfcheck.Static(r)
			assert.ErrorIs(t, err, elfcheck.ErrNotELF)
			_, ok, err := elfcheck.GoInfo(r)
			assert.ErrorIs(t, err, elfcheck.ErrNotELF)
			assert.False(t, ok)
			var mm *elfcheck.MismatchError
			assert.False(t, errors.As(elfcheck.Check(r, p), &mm))
		})
	}
	assert.EqualError(t, elfcheck.Check(bytes.NewReader([]byte("#!/bin/sh\n")), p), `not an ELF executable (starts with "#!/b")`)
	assert.True(t, elfcheck.IsELF([]byte("\x7fELF\x02")))
	assert.False(t, elfcheck.IsELF([]byte("\x7fEL")))
}

func TestCheckFileErrors(t *testing.T) {
	err := elfcheck.CheckFile(t.TempDir()+"/missing", v1.Platform{OS: "linux", Architecture: "amd64"})
	assert.ErrorContains(t, err, "missing")
	err = elfcheck.Check(bytes.NewReader(nil), v1.Platform{OS: "windows", Architecture: "amd64"})
	assert.EqualError(t, err, "no ELF expectations for platform windows/amd64 (elfcheck knows the Linux ports of Go)")
}
