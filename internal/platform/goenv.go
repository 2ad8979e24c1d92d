package platform

import (
	"fmt"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// goPorts is the set of GOOS/GOARCH pairs helperbuild builds container images
// for: the Linux ports of `go tool dist list` that have container runtimes.
var goPorts = map[string]bool{
	"linux/386": true, "linux/amd64": true, "linux/arm": true, "linux/arm64": true,
	"linux/loong64": true, "linux/mips": true, "linux/mipsle": true, "linux/mips64": true,
	"linux/mips64le": true, "linux/ppc64": true, "linux/ppc64le": true,
	"linux/riscv64": true, "linux/s390x": true,
}

// variants lists the variants GoEnv maps for an architecture; "" is none.
var variants = map[string][]string{
	"arm":   {"v5", "v6", "v7"},
	"amd64": {"", "v2", "v3", "v4"},
}

// Known lists every platform GoEnv accepts, variants included, sorted: for
// callers that must name something per platform before they know which
// platforms a base offers.
func Known() []v1.Platform {
	ports := make([]string, 0, len(goPorts))
	for p := range goPorts {
		ports = append(ports, p)
	}
	sort.Strings(ports)
	var out []v1.Platform
	for _, port := range ports {
		osName, arch, _ := strings.Cut(port, "/")
		vs, ok := variants[arch]
		if !ok {
			vs = []string{""}
		}
		for _, v := range vs {
			out = append(out, v1.Platform{OS: osName, Architecture: arch, Variant: v})
		}
	}
	return out
}

// Buildable reports whether Go can cross-compile for p.
func Buildable(p v1.Platform) bool {
	_, err := GoEnv(p)
	return err == nil
}

// GoEnv returns the Go toolchain variables that select p: GOOS, GOARCH and,
// where the platform has a variant, GOARM or GOAMD64. Callers put them last in
// the environment of `go build` so nothing inherited can override them.
func GoEnv(p v1.Platform) ([]string, error) {
	p = Normalize(p)
	if !goPorts[p.OS+"/"+p.Architecture] {
		return nil, fmt.Errorf("Go cannot build %s for a container image (supported: linux/amd64, linux/arm64, linux/arm/v6, linux/arm/v7, linux/ppc64le, linux/s390x, linux/riscv64, linux/386, ...)", Format(p))
	}
	env := []string{"GOOS=" + p.OS, "GOARCH=" + p.Architecture}
	switch p.Architecture {
	case "arm":
		switch p.Variant {
		case "v5":
			env = append(env, "GOARM=5")
		case "v6":
			env = append(env, "GOARM=6")
		case "v7", "":
			env = append(env, "GOARM=7")
		default:
			return nil, fmt.Errorf("platform %s: unknown arm variant %q (want v5, v6 or v7)", Format(p), p.Variant)
		}
	case "amd64":
		switch p.Variant {
		case "":
			env = append(env, "GOAMD64=v1")
		case "v2", "v3", "v4":
			env = append(env, "GOAMD64="+p.Variant)
		default:
			return nil, fmt.Errorf("platform %s: unknown amd64 variant %q (want v2, v3 or v4)", Format(p), p.Variant)
		}
	default:
		if p.Variant != "" {
			return nil, fmt.Errorf("platform %s: Go has no variant %q for %s", Format(p), p.Variant, p.Architecture)
		}
	}
	return env, nil
}
