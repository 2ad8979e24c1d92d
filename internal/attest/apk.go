package attest

import (
	"fmt"
	"io"
	"strings"
)

// ParseAPKInstalled reads an apk database (/lib/apk/db/installed): one
// block of "X:value" lines per package, blocks separated by blank lines.
// It keeps P (name), V (version), A (arch), o (origin), L (license) and
// m (maintainer); a block without P (nothing to call the package) is
// skipped, a missing V or A leaves the field empty. A line that is neither
// blank nor "X:value" is an error naming its line.
func ParseAPKInstalled(r io.Reader) ([]OSPackage, error) {
	var out []OSPackage
	var cur OSPackage
	seen := map[byte]bool{}
	flush := func() {
		if cur.Name != "" {
			cur.Manager = APK
			out = append(out, cur)
		}
		cur = OSPackage{}
		clear(seen)
	}
	s := newLineScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimRight(s.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(line) < 2 || line[1] != ':' {
			return nil, fmt.Errorf("apk database line %d: want X:value, got %q", n, line)
		}
		key, val := line[0], line[2:]
		if seen[key] {
			continue // F:, R:, a:, Z: repeat per file; the package fields come first
		}
		seen[key] = true
		switch key {
		case 'P':
			cur.Name = val
		case 'V':
			cur.Version = val
		case 'A':
			cur.Arch = val
		case 'o':
			cur.Source = val
		case 'L':
			cur.License = val
		case 'm':
			cur.Maintainer = val
		}
	}
	if err := s.Err(); err != nil {
		return nil, scanErr("apk database", err)
	}
	flush()
	return out, nil
}
