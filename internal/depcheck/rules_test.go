package depcheck

import "fmt"

// role is what a package is for; it decides what the package may import.
type role int

const (
	shared  role = iota + 1 // knows one thing several packages need
	stage                   // one step of a release
	wiring                  // release: orders the stages
	command                 // cmd/helperbuild: flags, environment, printing
	fixture                 // test fixtures
	suite                   // end-to-end suites and test servers
)

func (r role) String() string {
	switch r {
	case shared:
		return "shared"
	case stage:
		return "stage"
	case wiring:
		return "wiring"
	case command:
		return "command"
	case fixture:
		return "fixture"
	case suite:
		return "suite"
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// roles gives every package of the module, by its path inside the module,
// its role.
var roles = map[string]role{
	"dockerfiles":         shared,
	"internal/attestspec": shared,
	"internal/elfcheck":   shared,
	"internal/gitmeta":    shared,
	"internal/imageref":   shared,
	"internal/part":       shared,
	"internal/platform":   shared,
	"internal/progress":   shared,
	"internal/retry":      shared,
	"internal/registry":   shared,
	"internal/outfile":    shared,
	"internal/rootfs":     shared,
	"internal/sandbox":    shared,
	"internal/attest":     stage,
	"internal/crossbuild": stage,
	"internal/dockerfile": stage,
	"internal/layer":      stage,
	"internal/manifest":   stage,
	"internal/publish":    stage,
	"internal/recipe":     stage,
	"internal/scaffold":   stage,
	"internal/verify":     stage,
	"internal/release":    wiring,
	"cmd/helperbuild":     command,
	"internal/depcheck":   fixture,
	"internal/tartest":    fixture,
	"internal/testkit":    fixture,
	"test/e2e":            suite,
	"test/faultproxy":     suite,

	"internal/sandbox/sandboxtest": fixture,
}

// may says whether a package of role from may import one of role to in its
// non-test files; the reason is the rule, for the message when not.
func may(from, to role) (bool, string) {
	switch from {
	case shared:
		return to == shared, "a shared package imports only shared packages"
	case stage:
		return to == shared, "a stage imports only shared packages (stages do not import each other; release passes values between them)"
	case wiring:
		return to == shared || to == stage, "release imports only stages and shared packages"
	case command:
		return to != fixture && to != suite, "the command imports no test code"
	case fixture:
		return to == shared, "a fixture imports only shared packages"
	case suite:
		return true, ""
	}
	return false, "unknown role"
}

// mayInTest is may for a package's test files: they may also use test code
// (fixtures and the packages under test/).
func mayInTest(from, to role) (bool, string) {
	if to == fixture || to == suite {
		return true, ""
	}
	return may(from, to)
}

// onlyCommand lists imports outside the module that only the command (and
// the suites) may use.
var onlyCommand = []string{"github.com/spf13/cobra"}

// envReaders are the os functions that read the process environment; only
// the command and the suites may call them.
var envReaders = []string{"Getenv", "LookupEnv", "Environ", "ExpandEnv"}
