package verify

import (
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// elfFile is an ELF executable found in the image.
type elfFile struct {
	path     string
	src      rootfs.Source
	goBinary bool
	// mainPkg is a Go binary's main package path from its build info ("" when
	// the build info names none, or for other files).
	mainPkg string
	// runnable: a program (ET_EXEC, or ET_DYN with an interpreter, or a Go
	// binary) rather than a shared library that happens to have an x bit.
	runnable bool
	// modules are a Go binary's modules (goModules), read only when
	// archCheck.modules asks.
	modules []string
}

// archCheck checks ELF executables against the platform of their image.
type archCheck struct {
	platform v1.Platform
	modules  bool // also read each Go binary's modules
	f        findings
	files    []elfFile
}

// check runs elfcheck on one spooled ELF file. Everything it finds is a
// finding, not an error: the file is local, so a failure to parse it means
// the file is broken.
func (a *archCheck) check(p string, src rootfs.Source, f *os.File) {
	file := elfFile{path: p, src: src, runnable: isProgram(f)}
	defer func() { a.files = append(a.files, file) }()
	if err := elfcheck.Check(f, a.platform); err != nil {
		a.f.failAt(p, namePath(p, err))
		// A Go program of the wrong architecture is still run, so that the
		// run says what a node would.
		if info, ok, _ := elfcheck.GoInfo(f); ok {
			file.goBinary, file.mainPkg, file.runnable = true, info.Path, true
		}
		return
	}
	info, ok, err := elfcheck.GoInfo(f)
	if err != nil {
		a.f.failAt(p, fmt.Sprintf("%s: Go build info: %v", p, err))
		return
	}
	if ok {
		file.goBinary, file.mainPkg = true, info.Path
		if err := elfcheck.CheckGo(info, a.platform); err != nil {
			a.f.failAt(p, namePath(p, err))
		}
		if info.CGOEnabled == "1" {
			a.f.warnAt(p, fmt.Sprintf("%s: Go binary built with CGO_ENABLED=1", p))
		}
		if a.modules {
			if bi, err := buildinfo.Read(f); err == nil {
				file.modules = goModules(bi)
			}
		}
	}
	file.runnable = file.runnable || file.goBinary
}

// namePath puts the file's path into an elfcheck message: "binary is ELF
// ..., not linux/arm64" becomes "/usr/bin/x is ELF ..., not linux/arm64".
func namePath(p string, err error) string {
	if rest, ok := strings.CutPrefix(err.Error(), "binary "); ok {
		return p + " " + rest
	}
	return p + ": " + err.Error()
}

// isProgram reports whether f is an executable rather than a shared library.
func isProgram(f *os.File) bool {
	ef, err := elf.NewFile(f)
	if err != nil {
		return false
	}
	switch ef.Type {
	case elf.ET_EXEC:
		return true
	case elf.ET_DYN:
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				return true
			}
		}
	}
	return false
}

// summary is the passing reason of the arch check.
func (a *archCheck) summary(scope string) string {
	switch len(a.files) {
	case 0:
		return "no ELF executables in " + scope
	case 1:
		return fmt.Sprintf("1 ELF executable in %s matches %s", scope, platform.Format(a.platform))
	default:
		return fmt.Sprintf("%d ELF executables in %s match %s", len(a.files), scope, platform.Format(a.platform))
	}
}
