package attest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// OS is what a base image says about its distribution: its os-release and
// the packages its package database lists as installed.
type OS struct {
	// Release is the base's /etc/os-release; zero when it has none.
	Release OSRelease
	// Packages are the installed packages: the apk database's, then dpkg's,
	// each in the order of its files (SBOM sorts them).
	Packages []OSPackage
}

// OSRelease is the part of os-release(5) an SBOM uses.
type OSRelease struct {
	ID              string // "alpine", "debian", "ubuntu"
	VersionID       string // "3.20.3", "12"
	VersionCodename string // "bookworm"; used when VersionID is empty
	PrettyName      string // "Alpine Linux v3.20"
}

// distro is the purl "distro" qualifier: ID-VERSION_ID (or the codename).
func (r OSRelease) distro() string {
	v := r.VersionID
	if v == "" {
		v = r.VersionCodename
	}
	if r.ID == "" || v == "" {
		return r.ID
	}
	return r.ID + "-" + v
}

// Package managers of OSPackage.Manager.
const (
	APK  = "apk"
	Dpkg = "deb"
)

// OSPackage is one installed package of a base image.
type OSPackage struct {
	Manager       string // APK or Dpkg
	Name          string
	Version       string // empty when the database gives none
	Arch          string // the distribution's name: x86_64, aarch64, amd64, arm64...
	Source        string // apk origin, dpkg Source: the source package
	SourceVersion string // dpkg only, when it differs from Version
	License       string // apk only: the L: field as written
	Maintainer    string // "Name <email>"
}

// maxLine bounds one line of a package database or os-release.
const maxLine = 4 << 20

func newLineScanner(r io.Reader) *bufio.Scanner {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxLine)
	return s
}

// scanErr words a scanner's error for what (a file name).
func scanErr(what string, err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%s: a line is longer than %d bytes", what, maxLine)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ParseOSRelease reads an os-release(5) file: KEY=VALUE lines, values
// optionally in single or double quotes (with backslash escapes in double
// quotes), comments and blank lines ignored.
func ParseOSRelease(r io.Reader) (OSRelease, error) {
	var out OSRelease
	s := newLineScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return OSRelease{}, fmt.Errorf("os-release line %d: want KEY=VALUE, got %q", n, line)
		}
		v = unquoteShell(v)
		switch k {
		case "ID":
			out.ID = v
		case "VERSION_ID":
			out.VersionID = v
		case "VERSION_CODENAME":
			out.VersionCodename = v
		case "PRETTY_NAME":
			out.PrettyName = v
		}
	}
	if err := s.Err(); err != nil {
		return OSRelease{}, scanErr("os-release", err)
	}
	return out, nil
}

// unquoteShell undoes the quoting os-release allows: '...' literally,
// "..." with \" \\ \$ \` escapes; an unquoted value as is.
func unquoteShell(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	v = v[1 : len(v)-1]
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
