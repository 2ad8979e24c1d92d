package platform

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

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
	if _, ok := portOf(p); !ok {
		if _, ok := windowsPortOf(p); !ok {
			return nil, fmt.Errorf("helperbuild builds no container image for %s (supported: linux/amd64, linux/arm64, linux/arm/v6, linux/arm/v7, linux/ppc64le, linux/s390x, linux/riscv64, linux/386, ..., windows/amd64, windows/arm64)", Format(p))
		}
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

// targetVars are the variables that choose what the go command builds for:
// GOOS, GOARCH and every per-architecture baseline. Only GoEnv's values may
// reach `go build`; a GOPPC64=power10 or GOARM64=v9.0 left in CI would
// otherwise silently raise the baseline of an image that claims plain
// linux/ppc64le or linux/arm64.
var targetVars = []string{
	"GOOS", "GOARCH",
	"GO386", "GOAMD64", "GOARM", "GOARM64",
	"GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM",
}

// IsTargetVar reports whether the environment variable name chooses what
// the go command builds for (GOOS, GOARCH, GOARM, GOAMD64, GOPPC64, ...): a
// variable only GoEnv may set.
func IsTargetVar(name string) bool {
	return slices.Contains(targetVars, name)
}

// FromGoBuild is the platform a Go binary was built for, from the build
// settings it records (GOOS, GOARCH, GOARM, GOAMD64; "" where not recorded):
// GOARM=6 is arm/v6 and GOARM=7 arm/v7 (a float mode such as "7,softfloat"
// does not change it), GOAMD64=v1 is plain amd64 and GOAMD64=v3 amd64/v3. It
// is GoEnv read backwards; a setting that was not recorded leaves the field
// empty.
func FromGoBuild(goos, goarch, goarm, goamd64 string) v1.Platform {
	p := v1.Platform{OS: goos, Architecture: goarch}
	switch goarch {
	case "arm":
		if level, _, _ := strings.Cut(goarm, ","); level != "" {
			p.Variant = "v" + level
		}
	case "amd64":
		if goamd64 != "v1" {
			p.Variant = goamd64
		}
	}
	return p
}
