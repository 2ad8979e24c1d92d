package platform

import (
	"cmp"
	"debug/pe"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// windowsPort is what helperbuild knows about one Windows port of Go that
// Windows containers run: the GOARCH and the machine field of its PE
// executables.
type windowsPort struct {
	arch    string
	machine uint16
}

// windowsPorts are the Windows ports of Go with a Windows container runtime.
var windowsPorts = []windowsPort{
	{"amd64", pe.IMAGE_FILE_MACHINE_AMD64},
	{"arm64", pe.IMAGE_FILE_MACHINE_ARM64},
}

// windowsPortOf returns the Windows port of p's architecture; ok is false
// unless p's OS is windows and the architecture is one Windows containers run.
func windowsPortOf(p v1.Platform) (windowsPort, bool) {
	if p.OS != "windows" {
		return windowsPort{}, false
	}
	i := slices.IndexFunc(windowsPorts, func(q windowsPort) bool { return q.arch == p.Architecture })
	if i < 0 {
		return windowsPort{}, false
	}
	return windowsPorts[i], true
}

// IsWindows reports whether p is a Windows platform.
func IsWindows(p v1.Platform) bool { return Normalize(p).OS == "windows" }

// ExeName is the file name of a Go executable called name on p: name.exe on
// Windows, name elsewhere.
func ExeName(p v1.Platform, name string) string {
	if IsWindows(p) && !strings.HasSuffix(strings.ToLower(name), ".exe") {
		return name + ".exe"
	}
	return name
}

// PEMachineOf returns the machine field of the PE header of a Windows
// executable for p's architecture; ok is false for a platform that is not a
// Windows port helperbuild builds.
func PEMachineOf(p v1.Platform) (uint16, bool) {
	q, ok := windowsPortOf(Normalize(p))
	return q.machine, ok
}

// ArchOfPE returns the GOARCH whose Windows executables carry the PE machine
// field m; ok is false when no Windows port helperbuild builds does.
func ArchOfPE(m uint16) (string, bool) {
	for _, q := range windowsPorts {
		if q.machine == m {
			return q.arch, true
		}
	}
	return "", false
}

// checkOSVersion accepts a Windows version as images record it:
// major.minor.build[.revision], each a decimal number (10.0.20348,
// 10.0.20348.2340).
func checkOSVersion(v string) error {
	parts := strings.Split(v, ".")
	if len(parts) < 3 || len(parts) > 4 {
		return fmt.Errorf("OS version %q: want major.minor.build[.revision], e.g. 10.0.20348 (ltsc2022) or 10.0.17763 (ltsc2019)", v)
	}
	for _, part := range parts {
		if _, err := strconv.ParseUint(part, 10, 32); err != nil {
			return fmt.Errorf("OS version %q: %q is not a number; want e.g. 10.0.20348", v, part)
		}
	}
	return nil
}

// OSBuild is the major.minor.build of a Windows OS version ("10.0.20348" for
// "10.0.20348.2340"): what a process-isolated Windows node compares with its
// own. ok is false for a version that is not major.minor.build[.revision].
func OSBuild(osVersion string) (string, bool) {
	if checkOSVersion(osVersion) != nil {
		return "", false
	}
	parts := strings.Split(osVersion, ".")
	return strings.Join(parts[:3], "."), true
}

// Satisfies reports whether an image for have may serve the platform asked
// for: the same os/arch/variant and, where asked names an OS version, the
// same Windows build (asked 10.0.20348 is satisfied by 10.0.20348.2340; a
// revision in asked must match exactly). An asked platform without an OS
// version is satisfied by every build.
func Satisfies(have, asked v1.Platform) bool {
	h, a := Normalize(have), Normalize(asked)
	if h.OS != a.OS || h.Architecture != a.Architecture || h.Variant != a.Variant {
		return false
	}
	if a.OSVersion == "" {
		return true
	}
	if strings.Count(a.OSVersion, ".") > 2 {
		return h.OSVersion == a.OSVersion
	}
	hb, ok := OSBuild(h.OSVersion)
	return ok && hb == a.OSVersion
}

// IndexSatisfied is the position of the first platform of asked that have
// satisfies (Satisfies: an asked Windows build is served by an image of
// any of its revisions), or -1.
func IndexSatisfied(asked []v1.Platform, have v1.Platform) int {
	for i, a := range asked {
		if Satisfies(have, a) {
			return i
		}
	}
	return -1
}

// Ordered returns list in the order of entries in an index: every
// non-Windows platform first, in the order given, then the Windows platforms
// by architecture and then by OS version, oldest build first (numerically:
// 10.0.17763 before 10.0.20348). A Windows node picks its entry by os.version,
// not position, so the order is only for stable digests and readable output.
func Ordered(list []v1.Platform) []v1.Platform {
	out := make([]v1.Platform, 0, len(list))
	var windows []v1.Platform
	for _, p := range list {
		if IsWindows(p) {
			windows = append(windows, p)
			continue
		}
		out = append(out, p)
	}
	slices.SortStableFunc(windows, compareWindows)
	return append(out, windows...)
}

// compareWindows orders Windows platforms by architecture, variant and OS
// version, the version compared number by number ("" first).
func compareWindows(a, b v1.Platform) int {
	if c := cmp.Compare(a.Architecture, b.Architecture); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Variant, b.Variant); c != 0 {
		return c
	}
	return compareOSVersion(a.OSVersion, b.OSVersion)
}

// compareOSVersion compares dotted versions number by number; a part that
// is not a number compares as text after every number.
func compareOSVersion(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if a == "" {
		pa = nil
	}
	if b == "" {
		pb = nil
	}
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.ParseUint(pa[i], 10, 64)
		nb, eb := strconv.ParseUint(pb[i], 10, 64)
		switch {
		case ea == nil && eb == nil:
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		default:
			if c := cmp.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(pa), len(pb))
}
