package pecheck

import (
	"debug/buildinfo"
	"debug/pe"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// ErrNotPE is wrapped by every error about input that is not a PE file.
var ErrNotPE = errors.New("not a PE (Windows) executable")

// MismatchError says that a binary is not for the platform it was checked
// against.
type MismatchError struct {
	Want  v1.Platform // the platform asked for, normalised
	Found string      // what the binary is, e.g. "PE executable for arm64 (console)"
}

// Error reads like "binary is PE executable for arm64 (console), not windows/amd64".
func (e *MismatchError) Error() string {
	return fmt.Sprintf("binary is %s, not %s", e.Found, platform.Format(e.Want))
}

// Header is what Check reads from a PE file.
type Header struct {
	Machine   uint16
	Subsystem uint16
	DLL       bool
}

// Describe says what h is: "PE executable for amd64 (console)".
func (h Header) Describe() string {
	kind := "PE executable"
	if h.DLL {
		kind = "PE DLL"
	}
	arch, ok := platform.ArchOfPE(h.Machine)
	if !ok {
		arch = fmt.Sprintf("machine %#x", h.Machine)
	}
	return fmt.Sprintf("%s for %s (%s)", kind, arch, subsystemName(h.Subsystem))
}

func subsystemName(s uint16) string {
	switch s {
	case pe.IMAGE_SUBSYSTEM_WINDOWS_CUI:
		return "console"
	case pe.IMAGE_SUBSYSTEM_WINDOWS_GUI:
		return "GUI"
	default:
		return fmt.Sprintf("subsystem %d", s)
	}
}

// ReadHeader reads the PE file header and optional header from r.
func ReadHeader(r io.ReaderAt) (Header, error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return Header{}, fmt.Errorf("%w: %v", ErrNotPE, err)
	}
	defer f.Close()
	h := Header{Machine: f.Machine, DLL: f.Characteristics&pe.IMAGE_FILE_DLL != 0}
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		h.Subsystem = oh.Subsystem
	case *pe.OptionalHeader32:
		h.Subsystem = oh.Subsystem
	default:
		return Header{}, fmt.Errorf("%w: no optional header (an object file, not an executable)", ErrNotPE)
	}
	if f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
		return Header{}, fmt.Errorf("%w: not marked as an executable image", ErrNotPE)
	}
	return h, nil
}

// Check reads the PE headers from r and compares them with p: the machine of
// p's architecture, an executable (not a DLL) and the console subsystem. A
// mismatch is a *MismatchError; input that is not PE wraps ErrNotPE; a
// platform that is not a Windows port is a plain error.
func Check(r io.ReaderAt, p v1.Platform) error {
	want := platform.Normalize(p)
	want.OSVersion = ""
	machine, ok := platform.PEMachineOf(want)
	if !ok {
		return fmt.Errorf("no PE expectations for platform %s (pecheck knows windows/amd64 and windows/arm64)", platform.Format(want))
	}
	h, err := ReadHeader(r)
	if err != nil {
		return err
	}
	if h.Machine != machine || h.DLL || h.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI {
		return &MismatchError{Want: want, Found: h.Describe()}
	}
	return nil
}

// CheckFile is Check on the file at path; errors name the path.
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

// GoBuild is the part of a Go binary's build settings that decides where it
// runs, whatever its executable format; empty fields were not recorded.
type GoBuild = elfcheck.GoBuild

// GoInfo returns the build information of the Go PE executable in r; ok is
// false, with a nil error, for a PE file that is not a Go binary.
func GoInfo(r io.ReaderAt) (*GoBuild, bool, error) {
	if _, err := ReadHeader(r); err != nil {
		return nil, false, err
	}
	bi, err := buildinfo.Read(r)
	if err != nil {
		// debug/buildinfo does not export its "not a Go executable" error.
		if strings.Contains(err.Error(), "not a Go executable") {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("Go build info: %w", err)
	}
	return elfcheck.GoBuildOf(bi), true, nil
}

// CheckGo compares the build settings in info with p: GOOS, GOARCH and
// GOAMD64 with the amd64 variant. A setting not recorded is not compared.
func CheckGo(info *GoBuild, p v1.Platform) error {
	want := platform.Normalize(p)
	want.OSVersion = ""
	got := platform.FromGoBuild(info.GOOS, info.GOARCH, "", info.GOAMD64)
	ok := (got.OS == "" || got.OS == want.OS) && (got.Architecture == "" || got.Architecture == want.Architecture)
	if ok && want.Architecture == "amd64" && info.GOAMD64 != "" {
		ok = got.Variant == want.Variant
	}
	if ok {
		return nil
	}
	return &MismatchError{Want: want, Found: fmt.Sprintf("a Go build for %s (GOOS=%s GOARCH=%s GOAMD64=%s)", platform.Format(got), info.GOOS, info.GOARCH, info.GOAMD64)}
}
