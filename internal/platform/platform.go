package platform

import (
	"fmt"
	"strings"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Parse parses one specifier of the form os/arch[/variant][:os.version] and
// returns it normalised; the OS version (a Windows build such as
// 10.0.20348) may also be written as containerd does, windows(10.0.20348)/amd64.
// A specifier with fewer than two parts is an error, as is one that Go cannot
// build, and an OS version on anything but windows.
func Parse(s string) (v1.Platform, error) {
	spec := strings.TrimSpace(s)
	spec, osVersion, hasVersion := strings.Cut(spec, ":")
	if hasVersion && osVersion == "" {
		return v1.Platform{}, fmt.Errorf("platform %q: empty OS version after \":\"; want e.g. windows/amd64:10.0.20348", s)
	}
	parts := strings.Split(spec, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return v1.Platform{}, fmt.Errorf("platform %q: want os/arch[/variant][:os.version], e.g. linux/arm64, linux/arm/v7 or windows/amd64:10.0.20348", s)
	}
	for _, p := range parts {
		if p == "" {
			return v1.Platform{}, fmt.Errorf("platform %q: empty part; want os/arch[/variant]", s)
		}
	}
	parsed, err := platforms.Parse(spec)
	if err != nil {
		return v1.Platform{}, fmt.Errorf("platform %q: %w%s", s, err, suggest(spec))
	}
	if len(parsed.OSFeatures) > 0 {
		return v1.Platform{}, fmt.Errorf("platform %q: OS features (%s) are not supported; give os/arch[:os.version]", s, strings.Join(parsed.OSFeatures, "+"))
	}
	if parsed.OSVersion != "" {
		if hasVersion {
			return v1.Platform{}, fmt.Errorf("platform %q: the OS version is given twice; write windows/amd64:10.0.20348", s)
		}
		osVersion, hasVersion = parsed.OSVersion, true
	}
	p := Normalize(v1.Platform{OS: parsed.OS, Architecture: parsed.Architecture, Variant: parsed.Variant})
	if hasVersion {
		if p.OS != "windows" {
			return v1.Platform{}, fmt.Errorf("platform %q: an OS version is only meaningful for windows (a Windows build such as 10.0.20348); drop \":%s\"", s, osVersion)
		}
		if err := checkOSVersion(osVersion); err != nil {
			return v1.Platform{}, fmt.Errorf("platform %q: %w", s, err)
		}
		p.OSVersion = osVersion
	}
	if _, err := GoEnv(p); err != nil {
		return v1.Platform{}, fmt.Errorf("platform %q: %w%s", s, err, suggest(spec))
	}
	return p, nil
}

// ParseList parses a comma-separated list of specifiers. Empty items are
// ignored, duplicates (after normalisation) are dropped and the first
// occurrence keeps its place.
func ParseList(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, item := range strings.Split(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		p, err := Parse(item)
		if err != nil {
			return nil, err
		}
		if Index(out, p) < 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("platform list %q is empty; give e.g. linux/amd64,linux/arm64", s)
	}
	return out, nil
}

// Normalize returns p with only OS, architecture, variant and (for windows)
// OS version, normalised the way containerd normalises them. A Linux
// platform's OS version is dropped: no Linux runtime selects by it.
func Normalize(p v1.Platform) v1.Platform {
	n := platforms.Normalize(platforms.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant})
	out := v1.Platform{OS: n.OS, Architecture: n.Architecture, Variant: n.Variant}
	if out.OS == "windows" {
		out.OSVersion = strings.TrimSpace(p.OSVersion)
	}
	if out.Architecture == "arm64" && out.Variant == "v8" {
		out.Variant = ""
	}
	if out.Architecture == "amd64" && out.Variant == "v1" {
		out.Variant = ""
	}
	return out
}

// Equal reports whether a and b name the same platform after normalisation,
// OS version included: windows/amd64:10.0.17763 and windows/amd64:10.0.20348
// are two entries of one index.
func Equal(a, b v1.Platform) bool {
	na, nb := Normalize(a), Normalize(b)
	return na.OS == nb.OS && na.Architecture == nb.Architecture && na.Variant == nb.Variant && na.OSVersion == nb.OSVersion
}

// Index returns the position of p in list, or -1.
func Index(list []v1.Platform, p v1.Platform) int {
	for i, q := range list {
		if Equal(q, p) {
			return i
		}
	}
	return -1
}

// Format prints p as os/arch[/variant][:os.version], the way
// go-containerregistry's v1.ParsePlatform reads it.
func Format(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	if p.OSVersion != "" {
		s += ":" + p.OSVersion
	}
	return s
}

// FormatAll formats every platform of list, in order; nil for none.
func FormatAll(list []v1.Platform) []string {
	var out []string
	for _, p := range list {
		out = append(out, Format(p))
	}
	return out
}

// FormatList prints platforms comma-separated.
func FormatList(list []v1.Platform) string {
	return strings.Join(FormatAll(list), ",")
}

// GitLabArch is the architecture name GitLab Runner uses in helper image tags:
// amd64 is x86_64 (on Windows too), every arm variant is arm, the rest keep
// Go's name.
func GitLabArch(p v1.Platform) string {
	switch p.Architecture {
	case "amd64":
		return "x86_64"
	case "arm":
		return "arm"
	default:
		return p.Architecture
	}
}
