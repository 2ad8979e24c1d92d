package scaffold

import (
	"fmt"
	"strings"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// CheckBase fails when base cannot be the BASE_IMAGE Recipe writes: a
// registry reference or scratch, with nothing a template or YAML would
// read differently.
func CheckBase(base string) error {
	if _, err := imageref.Parse(base, nil); err != nil || strings.ContainsAny(base, " \t\n{}") {
		return fmt.Errorf("--base %q: want a registry reference such as registry.example.com/base/runner-helper:1.0, or scratch", base)
	}
	return nil
}
