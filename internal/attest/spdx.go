package attest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The SPDX 2.3 JSON document, as much of it as helperbuild writes.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID                string            `json:"SPDXID"`
	Name                  string            `json:"name"`
	VersionInfo           string            `json:"versionInfo,omitempty"`
	PackageFileName       string            `json:"packageFileName,omitempty"`
	Originator            string            `json:"originator,omitempty"`
	DownloadLocation      string            `json:"downloadLocation"`
	FilesAnalyzed         bool              `json:"filesAnalyzed"`
	Checksums             []spdxChecksum    `json:"checksums,omitempty"`
	SourceInfo            string            `json:"sourceInfo,omitempty"`
	LicenseConcluded      string            `json:"licenseConcluded"`
	LicenseDeclared       string            `json:"licenseDeclared"`
	LicenseComments       string            `json:"licenseComments,omitempty"`
	CopyrightText         string            `json:"copyrightText"`
	Description           string            `json:"description,omitempty"`
	Comment               string            `json:"comment,omitempty"`
	ExternalRefs          []spdxExternalRef `json:"externalRefs,omitempty"`
	PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

const (
	spdxVersion     = "SPDX-2.3"
	spdxDataLicense = "CC0-1.0"
	spdxDocumentID  = "SPDXRef-DOCUMENT"
	noAssertion     = "NOASSERTION"
	// spdxNamespaceBase prefixes every document namespace helperbuild
	// writes; the rest is the image's name and a digest of the document.
	spdxNamespaceBase = "https://github.com/helperbuild/helperbuild/spdx/"
)

// GoModuleHashRef is the SPDX externalRef type (category OTHER) whose
// locator is a Go module's hash as go.sum records it ("h1:" and the
// base64 of a SHA-256 over the module's file names and their hashes).
const GoModuleHashRef = "go-module-hash"

// purlRef is a purl as an SPDX external reference.
func purlRef(p purl) []spdxExternalRef {
	return []spdxExternalRef{{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: p.String()}}
}

// spdxIDs hands out SPDX element IDs: "SPDXRef-KIND-LABEL-HASH", LABEL made
// of the characters SPDX allows ([A-Za-z0-9.-], anything else becomes "-")
// and HASH the start of the SHA-256 of the element's key, long enough to
// tell apart two keys whose labels read the same. The same key always gets
// the same ID; nothing depends on map order or chance.
type spdxIDs struct {
	byKey map[string]string
	taken map[string]bool
}

func newSPDXIDs() *spdxIDs {
	return &spdxIDs{byKey: map[string]string{}, taken: map[string]bool{spdxDocumentID: true}}
}

// id returns key's ID and whether it was new.
func (s *spdxIDs) id(kind, label, key string) (string, bool) {
	if id, ok := s.byKey[key]; ok {
		return id, false
	}
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:])
	base := "SPDXRef-" + kind + "-" + spdxIDChars(label) + "-"
	for n := 8; ; n += 8 {
		id := base + h[:n]
		if !s.taken[id] || n == len(h) {
			s.byKey[key], s.taken[id] = id, true
			return id, true
		}
	}
}

// spdxIDChars maps s onto [A-Za-z0-9.-]: every other byte becomes "-".
func spdxIDChars(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}
