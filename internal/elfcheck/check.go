package elfcheck

import (
	"debug/elf"
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// MismatchError says that a binary is not for the platform it was checked
// against.
type MismatchError struct {
	Want   v1.Platform // the platform asked for, normalised
	Got    v1.Platform // best guess at the binary's platform; zero if unknown
	Found  string      // what the binary is, e.g. "ELF 64-bit LSB x86-64 (linux/amd64)"
	Reason string      // optional detail when Found alone does not explain it
}

// Error reads like "binary is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64".
func (e *MismatchError) Error() string {
	s := fmt.Sprintf("binary is %s, not %s", e.Found, platform.Format(e.Want))
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

func mismatch(h header, want v1.Platform, reason string) *MismatchError {
	e := &MismatchError{Want: want, Found: h.describe() + " (unknown platform)", Reason: reason}
	if got, ok := h.platform(); ok {
		e.Got = got
		e.Found = fmt.Sprintf("%s (%s)", h.describe(), platform.Format(got))
	}
	return e
}

// Check reads the ELF header from r and compares it with p: class (32/64-bit),
// byte order, machine and OS ABI (SYSV or GNU for linux). For arm it also
// requires EABI version 5 and compares the float-ABI flags with the variant:
// a hard-float binary (EF_ARM_ABI_FLOAT_HARD) does not fit arm/v5, and a
// dynamically linked soft-float binary does not fit arm/v6 or arm/v7, whose
// userlands are armhf. Go writes neither flag, so every Go arm binary passes
// for every arm variant here; [CheckGo] tells GOARM=6 from GOARM=7. Likewise
// GOAMD64 levels are invisible in the header.
//
// A mismatch is a *MismatchError; input that is not ELF is an error wrapping
// [ErrNotELF]; a platform elfcheck knows nothing about is a plain error.
func Check(r io.ReaderAt, p v1.Platform) error {
	want := platform.Normalize(p)
	exp, ok := platform.ELFOf(want)
	if !ok {
		return fmt.Errorf("no ELF expectations for platform %s (elfcheck knows the Linux ports of Go)", platform.Format(want))
	}
	h, err := readHeader(r)
	if err != nil {
		return err
	}
	if h.elf() != exp || osName(h.osabi) != want.OS {
		return mismatch(h, want, "")
	}
	if h.machine != elf.EM_ARM {
		return nil
	}
	if h.flags&armEABIMask != armEABIVersion5 {
		return mismatch(h, want, fmt.Sprintf("want ARM EABI version 5, e_flags are %#x", h.flags))
	}
	if h.flags&armABIFloatHard != 0 && want.Variant == "v5" {
		return mismatch(h, want, "hard-float code needs a VFP unit, which arm/v5 does not promise")
	}
	if h.flags&armABIFloatSoft != 0 && want.Variant != "v5" {
		static, err := static(r, h)
		if err != nil {
			return err
		}
		if !static {
			return mismatch(h, want, "a dynamically linked soft-float (armel) binary does not run on a hard-float (armhf) userland")
		}
	}
	return nil
}

// CheckFile is [Check] on the file at path; errors name the path.
func CheckFile(path string, p v1.Platform) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := Check(f, p); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
