package attest

import (
	"fmt"
	"io"
	"strings"
)

// ParseDpkgStatus reads a dpkg status file (/var/lib/dpkg/status, or one
// file of distroless images' /var/lib/dpkg/status.d/): deb822 stanzas of
// "Field: value" lines separated by blank lines, a line starting with a
// space or tab continuing the field before it. Field names are matched
// without regard to case.
//
// Only installed packages are returned: a Status whose last word is
// "installed" (a stanza without Status, as in status.d, counts as
// installed). Package, Version, Architecture, Source ("name" or
// "name (version)") and Maintainer are kept; a stanza without Package is
// skipped. A line that is not a field, a continuation or blank is an error
// naming its line.
func ParseDpkgStatus(r io.Reader) ([]OSPackage, error) {
	var out []OSPackage
	var cur OSPackage
	installed := true
	inStanza := false
	flush := func() {
		if inStanza && cur.Name != "" && installed {
			cur.Manager = Dpkg
			out = append(out, cur)
		}
		cur, installed, inStanza = OSPackage{}, true, false
	}
	s := newLineScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimRight(s.Text(), "\r")
		switch {
		case strings.TrimSpace(line) == "":
			flush()
			continue
		case line[0] == ' ' || line[0] == '\t':
			if !inStanza {
				return nil, fmt.Errorf("dpkg status line %d: continuation line without a field before it", n)
			}
			continue // only multi-line fields continue (Description, Conffiles), none of them kept
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("dpkg status line %d: want \"Field: value\", got %q", n, line)
		}
		inStanza = true
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "package":
			cur.Name = v
		case "version":
			cur.Version = v
		case "architecture":
			cur.Arch = v
		case "maintainer":
			cur.Maintainer = v
		case "source":
			name, ver, _ := strings.Cut(v, " ")
			cur.Source = name
			cur.SourceVersion = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(ver), "("), ")")
		case "status":
			f := strings.Fields(v)
			installed = len(f) > 0 && f[len(f)-1] == "installed"
		}
	}
	if err := s.Err(); err != nil {
		return nil, scanErr("dpkg status", err)
	}
	flush()
	return out, nil
}
