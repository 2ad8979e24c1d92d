package crossbuild

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// Env returns the environment for building p: base without any variable
// that chooses the target (platform.IsTargetVar: GOOS, GOARCH, GOARM,
// GOAMD64, GO386, GOARM64, GOPPC64, ...), so only the platform's own reach
// `go build`, then CGO_ENABLED=0 unless base sets CGO_ENABLED, then
// platform.GoEnv(p) last. base is not modified.
func Env(base []string, p v1.Platform) ([]string, error) {
	goenv, err := platform.GoEnv(p)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(base)+len(goenv)+1)
	cgoSet := false
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if platform.IsTargetVar(name) {
			continue
		}
		if name == "CGO_ENABLED" {
			cgoSet = true
		}
		out = append(out, kv)
	}
	if !cgoSet {
		out = append(out, "CGO_ENABLED=0")
	}
	return append(out, goenv...), nil
}

// buildFlags returns flags with -trimpath exactly once, first. Flags that
// Build sets itself (-o, -ldflags) or that would undo -trimpath are errors.
func buildFlags(flags []string) ([]string, error) {
	out := []string{"-trimpath"}
	for _, f := range flags {
		if !strings.HasPrefix(f, "-") {
			out = append(out, f) // the value of the flag before, e.g. -tags netgo
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		switch strings.TrimPrefix(name, "-") {
		case "trimpath":
			if hasValue && value != "true" {
				return nil, fmt.Errorf("build flag %q: helperbuild always builds with -trimpath for reproducible binaries", f)
			}
			continue
		case "o":
			return nil, fmt.Errorf("build flag %q: the output path comes from each target", f)
		case "ldflags":
			return nil, fmt.Errorf("build flag %q: pass linker flags as Options.Ldflags", f)
		}
		out = append(out, f)
	}
	return out, nil
}
