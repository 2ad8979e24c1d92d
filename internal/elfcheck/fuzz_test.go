package elfcheck_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
)

func FuzzCheck(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("#!/bin/sh\n"))
	f.Add(arm(0x05000400, interp).bytes())
	f.Add(arm(0x05000200, interp).bytes())
	e64 := elf64(elf.EM_X86_64, elf.ELFDATA2LSB)
	f.Add(withProgs(e64, interp, synthProg{elf.PT_DYNAMIC, e64.dynamic(elf.DT_NEEDED)}).bytes())
	f.Add(withProgs(elf64(elf.EM_S390, elf.ELFDATA2MSB), interp).bytes())
	targets := []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm", Variant: "v7"},
		{OS: "linux", Architecture: "arm", Variant: "v5"},
		{OS: "linux", Architecture: "s390x"},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		desc, descErr := elfcheck.Describe(r)
		for _, p := range targets {
			err := elfcheck.Check(r, p)
			var mm *elfcheck.MismatchError
			if errors.As(err, &mm) && descErr == nil && !bytes.Contains([]byte(err.Error()), []byte(desc)) {
				t.Fatalf("mismatch %q does not describe the binary as %q", err, desc)
			}
			if (descErr != nil) != errors.Is(err, elfcheck.ErrNotELF) {
				t.Fatalf("Describe error %v but Check error %v", descErr, err)
			}
		}
		_, _ = elfcheck.Static(r)
		_, _ = elfcheck.PlatformOf(r)
		if info, ok, err := elfcheck.GoInfo(r); ok && err == nil {
			_ = elfcheck.CheckGo(info, targets[0])
		}
	})
}
