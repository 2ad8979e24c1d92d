// Package depcheck holds helperbuild's import rules, written once: the role
// of each package of the module and which roles may import which (the table
// in rules_test.go). Its test checks every package's imports, test files
// included, against them, as go-containerregistry's
// pkg/registry/depcheck_test.go pins what its registry may import; a rule
// that lives only in prose drifts.
//
// The rules, by role:
//
//   - shared (platform, rootfs, ...): knows one thing several packages need;
//     imports only shared packages.
//   - stage (recipe, dockerfile, ...): does one step of a release; imports
//     only shared packages, so stages do not import each other.
//   - wiring (release): orders the stages; imports stages and shared
//     packages.
//   - command (cmd/helperbuild): flags, environment and printing; imports
//     anything but test code. It is the only package that imports cobra, and
//     no package below it reads the environment (os.Getenv, os.LookupEnv,
//     os.Environ, os.ExpandEnv).
//   - fixture (testkit, tartest): imported only by tests; imports only
//     shared packages.
//   - suite (test/...): may import anything.
//
// Test files follow their package's rule and may also import test code
// (fixtures and the packages under test/), and their own package.
// Every package of the module has a role, and every role in the table names
// a package: a new package fails the test until it is given one.
package depcheck
