package join

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/pecheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Binary is one executable ELF file, or .exe (PE) file, of an image and
// what its bytes say.
type Binary struct {
	Path string
	// Platform is the binary's platform as its header (and, for a Go
	// binary, its build settings) tells it; Variant is empty where neither
	// records one.
	Platform v1.Platform
	// Describe is elfcheck's or pecheck's one-line description, "ELF
	// 64-bit LSB aarch64", "PE executable for amd64 (console)".
	Describe string
	// Mismatch is elfcheck's finding against the config's platform; nil
	// when the binary fits it.
	Mismatch error
}

// Evidence is what an image's binaries say about its platform.
type Evidence struct {
	Binaries []Binary
	// Foreign counts the layers that were not read: non-distributable
	// (Windows base) layers, referenced by URL.
	Foreign int
}

// Mismatches are the binaries that do not fit the config's platform.
func (e Evidence) Mismatches() []Binary {
	var out []Binary
	for _, b := range e.Binaries {
		if b.Mismatch != nil {
			out = append(out, b)
		}
	}
	return out
}

// readEvidence streams every distributable layer of img once and checks
// each executable ELF file and each .exe (PE) file in it against want.
// Foreign (non-distributable) layers are counted, never read. Files are
// spooled to tmpDir one at a time and removed at once; nothing else is
// written.
func readEvidence(ctx context.Context, img v1.Image, want v1.Platform, tmpDir string) (Evidence, error) {
	var ev Evidence
	var exes []Binary
	layers, err := img.Layers()
	if err != nil {
		return ev, err
	}
	for i, l := range layers {
		mt, err := l.MediaType()
		if err != nil {
			return ev, fmt.Errorf("layer %d: %w", i, err)
		}
		if !mt.IsDistributable() {
			ev.Foreign++
			continue
		}
		err = rootfs.EachEntry(ctx, l, func(_ int, hdr *tar.Header, r io.Reader) error {
			if hdr.Typeflag != tar.TypeReg {
				return nil
			}
			exe := strings.HasSuffix(strings.ToLower(hdr.Name), ".exe")
			if hdr.Mode&0o111 == 0 && !exe {
				return nil
			}
			return spool(r, tmpDir, exe, func(f *os.File, pe bool) error {
				if pe {
					exes = append(exes, checkPE(windowsPath(hdr.Name), f, want))
				} else {
					ev.Binaries = append(ev.Binaries, checkBinary(rootfs.Clean(hdr.Name), f, want))
				}
				return nil
			})
		})
		if err != nil {
			return ev, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	// A Linux image may carry .exe files as data (for download, say): they
	// are evidence against its config only when it holds no ELF program.
	if platform.IsWindows(want) || len(ev.Binaries) == 0 {
		ev.Binaries = append(exes, ev.Binaries...)
	}
	return ev, nil
}

// spool copies r to a temporary file in dir and calls fn with it when r is
// an ELF file, or (exe) a PE file ("MZ"); other files are skipped unread
// past their first bytes.
func spool(r io.Reader, dir string, exe bool, fn func(f *os.File, pe bool) error) error {
	isPE := func(magic []byte) bool { return exe && len(magic) >= 2 && string(magic[:2]) == "MZ" }
	keep := func(magic []byte) bool { return isPE(magic) || elfcheck.IsELF(magic) }
	return elfcheck.Spool(r, dir, keep, func(f *os.File, magic []byte) error { return fn(f, isPE(magic)) })
}

// windowsPath turns a Windows layer path (Files/helper/x.exe) into the
// path the container sees (C:\helper\x.exe).
func windowsPath(name string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(name, "./"), "Files/")
	return `C:\` + strings.ReplaceAll(rest, "/", `\`)
}

// checkPE runs pecheck's checks (header: machine, console subsystem; then
// Go build settings) on one spooled .exe. Against a platform that is not
// Windows, a PE file is a mismatch naming what it is.
func checkPE(p string, f *os.File, want v1.Platform) Binary {
	b := Binary{Path: p}
	h, err := pecheck.ReadHeader(f)
	if err != nil {
		b.Mismatch = fmt.Errorf("%s: %w", p, err)
		return b
	}
	b.Describe = h.Describe()
	arch, ok := platform.ArchOfPE(h.Machine)
	if !ok {
		b.Mismatch = fmt.Errorf("%s is %s, not %s", p, b.Describe, platform.Format(want))
		return b
	}
	b.Platform = v1.Platform{OS: "windows", Architecture: arch}
	info, isGo, goErr := pecheck.GoInfo(f)
	isGo = isGo && goErr == nil
	if isGo && info.GOAMD64 != "" {
		b.Platform = platform.Normalize(platform.FromGoBuild("windows", arch, "", info.GOAMD64))
	}
	if !platform.IsWindows(want) {
		b.Mismatch = fmt.Errorf("%s is %s, not %s", p, b.Describe, platform.Format(want))
		return b
	}
	if err := pecheck.Check(f, want); err != nil {
		b.Mismatch = pathed(p, err)
		return b
	}
	if isGo {
		if err := pecheck.CheckGo(info, want); err != nil {
			b.Mismatch = pathed(p, err)
		}
	}
	return b
}

// checkBinary runs elfcheck's checks (header, then Go build settings) on
// one spooled file. A file elfcheck cannot read is a mismatch too: it is
// no evidence for the config.
func checkBinary(p string, f *os.File, want v1.Platform) Binary {
	b := Binary{Path: p}
	b.Describe, _ = elfcheck.Describe(f)
	got, err := elfcheck.PlatformOf(f)
	if err != nil {
		b.Mismatch = fmt.Errorf("%s: %w", p, err)
		return b
	}
	b.Platform = platform.Normalize(got)
	// A Go binary's build settings tell GOARM and GOAMD64, which its header
	// does not; one whose build info cannot be read is judged by its header.
	info, isGo, goErr := elfcheck.GoInfo(f)
	isGo = isGo && goErr == nil
	if isGo && info.Platform().Architecture != "" {
		b.Platform = platform.Normalize(info.Platform())
	}
	if err := elfcheck.Check(f, want); err != nil {
		b.Mismatch = pathed(p, err)
		return b
	}
	if isGo {
		if err := elfcheck.CheckGo(info, want); err != nil {
			b.Mismatch = pathed(p, err)
		}
	}
	return b
}

// pathed puts the file's path into an elfcheck message: "binary is ELF
// ..., not linux/arm64" becomes "/usr/bin/x is ELF ..., not linux/arm64".
func pathed(p string, err error) error {
	if rest, ok := strings.CutPrefix(err.Error(), "binary "); ok {
		return fmt.Errorf("%s %s", p, rest)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// binariesPlatform is the one platform every binary of ev is for, or an
// error saying why there is none: no binary, or binaries of several
// platforms. A binary without a variant (a C arm binary's header does not
// say v6 or v7) agrees with one that has it.
func binariesPlatform(ev Evidence) (v1.Platform, error) {
	if len(ev.Binaries) == 0 {
		if ev.Foreign > 0 {
			return v1.Platform{}, fmt.Errorf("no executable ELF file or .exe in any layer read (%d foreign layer(s) not read)", ev.Foreign)
		}
		return v1.Platform{}, errors.New("no executable ELF file or .exe in any layer")
	}
	var out v1.Platform
	for _, b := range ev.Binaries {
		if b.Platform.Architecture == "" {
			return v1.Platform{}, fmt.Errorf("%s: %v", b.Path, b.Mismatch)
		}
		switch {
		case out.Architecture == "":
			out = b.Platform
		case out.OS != b.Platform.OS || out.Architecture != b.Platform.Architecture:
			return v1.Platform{}, fmt.Errorf("binaries of several platforms: %s is %s, %s is %s",
				ev.Binaries[0].Path, platform.Format(ev.Binaries[0].Platform), b.Path, platform.Format(b.Platform))
		case out.Variant == "":
			out.Variant = b.Platform.Variant
		case b.Platform.Variant != "" && b.Platform.Variant != out.Variant:
			return v1.Platform{}, fmt.Errorf("binaries of several variants: %s is %s, %s is %s",
				ev.Binaries[0].Path, platform.Format(ev.Binaries[0].Platform), b.Path, platform.Format(b.Platform))
		}
	}
	return platform.Normalize(out), nil
}
