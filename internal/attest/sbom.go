package attest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// SBOMSpec is what SBOM describes: one platform image.
type SBOMSpec struct {
	Image Image
	// Base is the image's base; zero or "scratch" for none.
	Base Base
	// Binaries are the Go executables helperbuild put into the image.
	Binaries []Binary
	// BaseBinaries are the Go executables the base holds that the image
	// still holds (BaseScan.Binaries less the paths the image's own layers
	// write), with or without SHA256; BaseSkipped the base's ELF
	// executables BaseScan did not read. Both need a base.
	BaseBinaries []Binary
	BaseSkipped  []string
	// OS is what the base's os-release and package database say (ReadOS);
	// zero when the base has neither.
	OS OS
	// Created is the release epoch, the document's creation time.
	Created time.Time
	// ToolVersion is helperbuild's version, named as the document's creator.
	ToolVersion string
}

// SBOM returns the SPDX 2.3 JSON document of one platform image. The
// document DESCRIBES the image; the image is DESCENDANT_OF its base,
// CONTAINS the base's operating system (which CONTAINS the OS packages;
// without an os-release the image CONTAINS them itself) and CONTAINS each
// binary; the base CONTAINS each of its Go binaries; each binary DEPENDS_ON the modules compiled into it and on the Go
// standard library. Packages shared by several binaries appear once.
//
// The output is a pure function of spec: element IDs and the document
// namespace are derived from digests of what they name, lists are sorted,
// and the only time is spec.Created.
func SBOM(spec SBOMSpec) ([]byte, error) {
	im := spec.Image
	if err := im.check(); err != nil {
		return nil, err
	}
	b := &sbomBuilder{ids: newSPDXIDs()}
	p := im.platform()
	imgPurl := im.purl()
	imgID := b.add("Image", im.Name, "image|"+imgPurl.String(), spdxPackage{
		Name:                  im.label(),
		VersionInfo:           im.Manifest.Digest.String(),
		Checksums:             digestChecksum(im.Manifest.Digest),
		ExternalRefs:          purlRef(imgPurl),
		PrimaryPackagePurpose: "CONTAINER",
	})
	b.relate(spdxDocumentID, "DESCRIBES", imgID)

	if spec.Base.none() && len(spec.BaseBinaries)+len(spec.BaseSkipped) > 0 {
		return nil, fmt.Errorf("SBOM of %s: base binaries without a base", im.label())
	}
	if !spec.Base.none() {
		bp, err := spec.Base.purl(p)
		if err != nil {
			return nil, fmt.Errorf("SBOM of %s: %w", im.label(), err)
		}
		baseID := b.add("BaseImage", bp.Name, "base|"+bp.String(), spdxPackage{
			Name:                  spec.Base.Ref,
			VersionInfo:           spec.Base.Digest.String(),
			Checksums:             digestChecksum(spec.Base.Digest),
			ExternalRefs:          purlRef(bp),
			PrimaryPackagePurpose: "CONTAINER",
			Comment:               skippedComment(spec.BaseSkipped),
		})
		b.relate(imgID, "DESCENDANT_OF", baseID)
		if err := b.addBinaries(baseID, "base-binary|", spec.BaseBinaries, false); err != nil {
			return nil, fmt.Errorf("SBOM of %s: base: %w", im.label(), err)
		}
	}

	b.addOS(imgID, spec.OS)

	if err := b.addBinaries(imgID, "binary|", spec.Binaries, true); err != nil {
		return nil, fmt.Errorf("SBOM of %s: %w", im.label(), err)
	}

	creator := "Tool: helperbuild"
	if spec.ToolVersion != "" {
		creator += "-" + spec.ToolVersion
	}
	doc := spdxDocument{
		SPDXVersion: spdxVersion,
		DataLicense: spdxDataLicense,
		SPDXID:      spdxDocumentID,
		Name:        fmt.Sprintf("%s@%s %s", im.label(), im.Manifest.Digest, platform.Format(p)),
		CreationInfo: spdxCreationInfo{
			Created:  spec.Created.UTC().Truncate(time.Second).Format(time.RFC3339),
			Creators: []string{creator},
		},
		Packages:      b.pkgs,
		Relationships: b.rels,
	}
	// The namespace must be unique per document: a digest of the document
	// without it is, and is the same for the same document.
	unnamed, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(unnamed)
	doc.DocumentNamespace = spdxNamespaceBase + url.PathEscape(im.label()) + "-" + hex.EncodeToString(sum[:16])
	return marshal(doc)
}

// sbomBuilder collects a document's packages and relationships in the
// order they are added, each once.
type sbomBuilder struct {
	ids  *spdxIDs
	pkgs []spdxPackage
	rels []spdxRelationship
	seen map[spdxRelationship]bool
}

// add adds pkg under the ID of key (unless key was added before) and
// returns the ID. Fields SPDX wants and helperbuild cannot know are
// NOASSERTION.
func (b *sbomBuilder) add(kind, label, key string, pkg spdxPackage) string {
	id, isNew := b.ids.id(kind, label, key)
	if !isNew {
		return id
	}
	pkg.SPDXID = id
	pkg.DownloadLocation = noAssertion
	if pkg.LicenseDeclared == "" {
		pkg.LicenseDeclared = noAssertion
	}
	pkg.LicenseConcluded, pkg.CopyrightText = noAssertion, noAssertion
	b.pkgs = append(b.pkgs, pkg)
	return id
}

func (b *sbomBuilder) relate(a, typ, c string) {
	r := spdxRelationship{SPDXElementID: a, RelationshipType: typ, RelatedSPDXElement: c}
	if b.seen == nil {
		b.seen = map[spdxRelationship]bool{}
	}
	if !b.seen[r] {
		b.seen[r] = true
		b.rels = append(b.rels, r)
	}
}

// addOS adds the base's operating system and its packages, sorted by
// manager, name, version and architecture.
func (b *sbomBuilder) addOS(imgID string, os OS) {
	parent := imgID
	if rel := os.Release; rel.ID != "" {
		osID := b.add("OperatingSystem", rel.distro(), "os|"+rel.ID+"|"+rel.VersionID+"|"+rel.VersionCodename, spdxPackage{
			Name:        rel.ID,
			VersionInfo: cmp.Or(rel.VersionID, rel.VersionCodename),
			Description: rel.PrettyName,
			// The JSON schema's spelling (the spec's text has
			// OPERATING-SYSTEM; for JSON the schema rules, spdx/spdx-spec#813).
			PrimaryPackagePurpose: "OPERATING_SYSTEM",
		})
		b.relate(imgID, "CONTAINS", osID)
		parent = osID
	}
	pkgs := slices.Clone(os.Packages)
	slices.SortFunc(pkgs, func(x, y OSPackage) int {
		return strings.Compare(x.Manager+"\x00"+x.Name+"\x00"+x.Version+"\x00"+x.Arch, y.Manager+"\x00"+y.Name+"\x00"+y.Version+"\x00"+y.Arch)
	})
	for _, pkg := range pkgs {
		pu := osPurl(pkg, os.Release)
		declared, comment := noAssertion, ""
		if pkg.License != "" {
			declared, comment = spdxLicense(pkg.License)
		}
		id := b.add("Package", pkg.Name+"-"+pkg.Version, "os-package|"+pu.String(), spdxPackage{
			Name:            pkg.Name,
			VersionInfo:     pkg.Version,
			Originator:      spdxPerson(pkg.Maintainer),
			SourceInfo:      sourceInfo(pkg),
			LicenseDeclared: declared,
			LicenseComments: comment,
			ExternalRefs:    purlRef(pu),
		})
		b.relate(parent, "CONTAINS", id)
	}
}

// addBinaries adds bins, sorted by path, each CONTAINed by parentID under
// a key with prefix; hashed says each must have its SHA256.
func (b *sbomBuilder) addBinaries(parentID, prefix string, bins []Binary, hashed bool) error {
	bins = slices.Clone(bins)
	slices.SortFunc(bins, func(x, y Binary) int { return strings.Compare(x.Path, y.Path) })
	for i, bin := range bins {
		if err := bin.check(hashed); err != nil {
			return err
		}
		if i > 0 && bins[i-1].Path == bin.Path {
			return fmt.Errorf("binary %s given twice", bin.Path)
		}
		b.addBinary(parentID, prefix, bin)
	}
	return nil
}

// skippedComment says which ELF executables of the base were not read.
func skippedComment(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return fmt.Sprintf("build info not read from %d ELF executables (pre-Go 1.18 build info, or past %d Go binaries): %s",
		len(paths), elfcheck.MaxBaseGoBinaries, strings.Join(paths, " "))
}

// addBinary adds bin, the modules compiled into it (sorted by path and
// version) and its Go standard library.
func (b *sbomBuilder) addBinary(parentID, prefix string, bin Binary) {
	bi := bin.Info
	bp := binaryPurl(bi)
	name := bi.Path
	if name == "" {
		name = bin.Path
	}
	binID := b.add("Application", bin.Path, prefix+bin.Path, spdxPackage{
		Name:                  name,
		VersionInfo:           mainVersion(bi),
		PackageFileName:       bin.Path,
		Checksums:             digestChecksum(bin.SHA256),
		ExternalRefs:          purlRef(bp),
		PrimaryPackagePurpose: "APPLICATION",
	})
	b.relate(parentID, "CONTAINS", binID)

	mods := make([]goModule, 0, len(bi.Deps))
	for _, d := range bi.Deps {
		if d != nil {
			mods = append(mods, compiled(d))
		}
	}
	slices.SortFunc(mods, func(x, y goModule) int {
		return strings.Compare(x.path+"\x00"+x.version+"\x00"+x.comment, y.path+"\x00"+y.version+"\x00"+y.comment)
	})
	for _, m := range mods {
		pu := m.purl()
		refs := purlRef(pu)
		if m.sum != "" {
			// Go's h1: hash (go.sum) is a SHA-256 over the module's file
			// list, not of any file: no SPDX checksum, which names a file's.
			refs = append(refs, spdxExternalRef{ReferenceCategory: "OTHER", ReferenceType: GoModuleHashRef, ReferenceLocator: m.sum})
		}
		id := b.add("Package", m.path+"-"+m.version, "golang|"+pu.String()+"|"+m.sum+"|"+m.comment, spdxPackage{
			Name:                  m.path,
			VersionInfo:           m.version,
			Comment:               m.comment,
			ExternalRefs:          refs,
			PrimaryPackagePurpose: "LIBRARY",
		})
		b.relate(binID, "DEPENDS_ON", id)
	}

	if bi.GoVersion != "" {
		full, _ := goVersion(bi.GoVersion)
		sp := stdlibPurl(bi.GoVersion)
		id := b.add("Package", "stdlib-"+full, "stdlib|"+sp.String(), spdxPackage{
			Name:                  "stdlib",
			VersionInfo:           full,
			Comment:               "the Go toolchain's standard library",
			ExternalRefs:          purlRef(sp),
			PrimaryPackagePurpose: "LIBRARY",
		})
		b.relate(binID, "DEPENDS_ON", id)
	}
}

// osPurl is an OS package's purl: pkg:apk/ID/NAME@VERSION or
// pkg:deb/ID/NAME@VERSION with arch, distro and the source package as
// upstream. The namespace is the os-release ID, else alpine for apk and
// debian for dpkg.
func osPurl(pkg OSPackage, rel OSRelease) purl {
	ns := rel.ID
	if ns == "" {
		ns = map[string]string{APK: "alpine", Dpkg: "debian"}[pkg.Manager]
	}
	q := map[string]string{"arch": pkg.Arch, "distro": rel.distro()}
	if pkg.Source != "" && pkg.Source != pkg.Name {
		q["upstream"] = pkg.Source
	}
	return purl{Type: pkg.Manager, Namespace: ns, Name: pkg.Name, Version: pkg.Version, Qualifiers: q}
}

// sourceInfo names the source package an OS package was built from, in the
// words trivy reads back ("built package from: NAME VERSION").
func sourceInfo(pkg OSPackage) string {
	if pkg.Source == "" {
		return ""
	}
	v := cmp.Or(pkg.SourceVersion, pkg.Version)
	return strings.TrimSpace("built package from: " + pkg.Source + " " + v)
}

// spdxPerson turns "Name <email>" into SPDX's "Person: Name (email)"; ""
// for an empty field.
func spdxPerson(m string) string {
	m = strings.TrimSpace(m)
	if m == "" {
		return ""
	}
	if name, rest, ok := strings.Cut(m, "<"); ok {
		if email, _, ok := strings.Cut(rest, ">"); ok {
			return fmt.Sprintf("Person: %s (%s)", strings.TrimSpace(name), strings.TrimSpace(email))
		}
	}
	return "Person: " + m
}

// digestChecksum is a sha256 digest as an SPDX checksum.
func digestChecksum(h v1.Hash) []spdxChecksum {
	if h.Algorithm != "sha256" {
		return nil
	}
	return []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: h.Hex}}
}
