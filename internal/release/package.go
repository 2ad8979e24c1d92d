package release

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
)

// DefaultBase is config-free mode's base when none is given: nothing under
// the binary, which is all a static Go binary (CGO_ENABLED=0, the default)
// needs. The summary says so, with what another base would add.
const DefaultBase = "scratch"

// majorSuffix is a module path's major version element (/v2), which names
// no program: go install names the binary after the element before it.
var majorSuffix = regexp.MustCompile(`^v[0-9]+$`)

// resolve fills in config-free mode's defaults, as ko does, in dir (the
// directory helperbuild runs in): Main as a ./ path inside dir (an
// absolute path is accepted there), BinaryName after the package's
// directory or, for ".", the module path's last element, Base scratch.
// It checks the package is a directory in dir.
func (pkg *Package) resolve(dir string) error {
	if filepath.IsAbs(pkg.Main) {
		rel, err := filepath.Rel(dir, pkg.Main)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return inputf("package %s is outside %s, the directory helperbuild runs in: run it in the package's module, or give the package as ./path", pkg.Main, dir)
		}
		pkg.Main = "./" + filepath.ToSlash(rel)
		if rel == "." {
			pkg.Main = "."
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, pkg.Main)); err != nil || !fi.IsDir() {
		return inputf("package %s: no such directory in %s", pkg.Main, dir)
	}
	if pkg.BinaryName == "" {
		pkg.BinaryName = binaryName(dir, pkg.Main)
	}
	if pkg.Base == "" {
		pkg.Base, pkg.DefaultBase = DefaultBase, true
	}
	return nil
}

// checkPlatforms fails early when the platforms can come from nowhere:
// --platforms all on scratch, which offers none, or none given on the
// default base (a given scratch fails the same way when planned).
func (pkg *Package) checkPlatforms(platforms, all bool) error {
	if pkg.Base != "scratch" {
		return nil
	}
	which := "scratch"
	if pkg.DefaultBase {
		which = "scratch (the default base)"
	}
	switch {
	case all:
		return inputf("--platforms all means every platform the base offers, and %s offers none; list them, e.g. --platforms linux/amd64,linux/arm64, or give --base REF", which)
	case !platforms && pkg.DefaultBase:
		return inputf("without --platforms the base's platforms are built, and %s offers none; list them, e.g. --platforms linux/amd64,linux/arm64, or give --base REF", which)
	}
	return nil
}

// binaryName names the binary of package main in dir as go install
// would: after its directory, or for the module root after the module
// path's last element (not a /vN suffix), else after dir.
func binaryName(dir, main string) string {
	if name := path.Base(path.Clean(main)); name != "." && name != "/" && name != ".." {
		return name
	}
	if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		if mod := modfile.ModulePath(data); mod != "" {
			elems := strings.Split(mod, "/")
			last := elems[len(elems)-1]
			if len(elems) > 1 && majorSuffix.MatchString(last) {
				last = elems[len(elems)-2]
			}
			return last
		}
	}
	return filepath.Base(dir)
}

// baseLine is the summary's line for a defaulted base.
func baseLine() string {
	return fmt.Sprintf("base: %s (default; give --base for a shell, CA certificates, a user)", DefaultBase)
}
