package platform

import (
	"fmt"
	"slices"
	"strings"
)

// suggest returns " (did you mean linux/amd64?)" for a specifier within a few
// edits of a platform Go can build for containers, else "".
func suggest(spec string) string {
	spec = strings.ToLower(spec)
	if os, arch, ok := strings.Cut(spec, "/"); ok {
		if alias, ok := debianArch[arch]; ok {
			return fmt.Sprintf(" (did you mean %s/%s? %s is Debian's name)", os, alias, arch)
		}
	}
	best := Nearest(spec, suggestionOrder())
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// debianArch maps Debian's architecture names that containerd does not
// know to the platform's.
var debianArch = map[string]string{"ppc64el": "ppc64le", "armhf": "arm/v7", "armel": "arm/v6"}

// suggestionOrder is every platform Go builds, the ones GitLab Runner
// releases for first, so that a tie goes to the platform people use.
func suggestionOrder() []string {
	out := []string{"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x", "linux/riscv64", "linux/arm/v6"}
	for _, p := range Known() {
		if f := Format(p); !slices.Contains(out, f) && p.Variant != "v5" {
			out = append(out, f)
		}
	}
	return out
}
