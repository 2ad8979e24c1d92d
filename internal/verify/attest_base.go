package verify

import (
	"cmp"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// baseBinaries collects the Go binaries of an image's base layers (those
// not its own) for the SBOM check, with debug/buildinfo on each spooled
// ELF executable: independent of the stream reader the SBOM's writer uses.
type baseBinaries struct {
	files []elfFile // goBinary and modules set, in stream order
}

// check reads one spooled ELF file of a base layer; a file that is no Go
// binary, or past elfcheck.MaxBaseGoBinaries, is left out, as by the
// SBOM's writer.
func (b *baseBinaries) check(p string, src rootfs.Source, f *os.File) {
	if len(b.files) >= elfcheck.MaxBaseGoBinaries {
		return
	}
	bi, err := buildinfo.Read(f)
	if err != nil {
		return
	}
	b.files = append(b.files, elfFile{path: p, src: src, goBinary: true, mainPkg: bi.Path, modules: goModules(bi)})
}

// present are the binaries t (the image's flattened tree) still holds
// unchanged: neither deleted nor replaced by a later layer.
func (b *baseBinaries) present(t *rootfs.FS) []elfFile {
	var out []elfFile
	for _, f := range b.files {
		if n, ok := t.Lookup(f.path); ok && n.IsRegular() && n.Source == f.src {
			out = append(out, f)
		}
	}
	return out
}

// checkSBOMBaseBinaries fails unless each Go binary of the base that the
// image still holds is in the SBOM, contained in the package the image is
// a DESCENDANT_OF, with the modules of its build info; a binary the base
// package's comment names as not read (pre-Go 1.18 build info, or past the
// count bound) is let go. It returns what it found for the summary.
func checkSBOMBaseBinaries(f *findings, data []byte, bins []elfFile) string {
	if len(bins) == 0 {
		return ""
	}
	var doc spdxDoc
	if json.Unmarshal(data, &doc) != nil {
		return "" // checkSBOMModules reports it
	}
	var baseIDs []string
	for _, r := range doc.Predicate.Relationships {
		if r.Type == "DESCENDANT_OF" {
			baseIDs = append(baseIDs, r.To)
		}
	}
	var notRead string
	app := map[string]string{} // packageFileName -> SPDXID, of the base's own
	for _, p := range doc.Predicate.Packages {
		if slices.Contains(baseIDs, p.SPDXID) {
			notRead += " " + p.Comment + " "
		}
	}
	for _, r := range doc.Predicate.Relationships {
		if r.Type != "CONTAINS" || !slices.Contains(baseIDs, r.From) {
			continue
		}
		for _, p := range doc.Predicate.Packages {
			if p.SPDXID == r.To && p.Purpose == "APPLICATION" && p.PackageFileName != "" {
				app[p.PackageFileName] = p.SPDXID
			}
		}
	}
	var listed []elfFile
	for _, b := range bins {
		if _, ok := app[b.path]; ok {
			listed = append(listed, b)
			continue
		}
		if strings.Contains(notRead, " "+b.path+" ") {
			continue
		}
		f.failAt(b.path, fmt.Sprintf("%s: Go binary of the base (%s) missing from the SBOM: no APPLICATION package with this packageFileName contained in the base package; rebuild with a helperbuild that lists base binaries",
			b.path, cmp.Or(b.mainPkg, "no main package recorded")))
	}
	// The modules of those listed are compared like the image's own.
	checkSBOMModules(f, data, listed)
	return fmt.Sprintf("%d of the base's %d Go binaries in the SBOM", len(listed), len(bins))
}
