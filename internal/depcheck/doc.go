// Package depcheck holds helperbuild's import rules, written once and
// checked by its test.
//
// The table in rules_test.go gives each package of the module a role and
// says which roles may import which. Its test checks every package's imports, test files
// included, against them, as go-containerregistry's
// pkg/registry/depcheck_test.go pins what its registry may import; a rule
// that lives only in prose drifts.
//
// The rules, by role (floors, lowest first; docs/architecture.md draws them):
//
//   - shared (platform, part, progress, ...): facts several packages need;
//     imports only shared packages.
//   - io (registry, imageref, retry, outfile, gitmeta, sandbox): talks to the
//     outside; imports shared and io packages.
//   - stage (recipe, crossbuild, ..., publish): does one step of a release;
//     imports only shared and io packages, so stages do not import each other.
//   - source (build, product): what release's one finish publishes: the
//     build pipeline and the images it hands over; imports stages, io,
//     shared and source packages. Stages do not import sources.
//   - wiring (release): owns a run; imports sources, stages, io and shared
//     packages.
//   - command (cmd/helperbuild): flags, environment and printing; imports only
//     the packages commandImports lists (at most six) and has at most 1,800
//     lines outside its tests. It is the only package that imports cobra, and
//     no package below it reads the environment (os.Getenv, os.LookupEnv,
//     os.Environ, os.ExpandEnv).
//   - fixture (testkit, tartest): imported only by tests; imports only
//     shared and io packages.
//   - suite (test/...): may import anything.
//
// Registry I/O: only internal/registry calls what reaches a registry over
// HTTP (registryIO: ggcr's remote reads, writes, pushers and pullers, its
// transport constructors, net/http requests and clients), on the transport
// stack it builds (publish writes through its Session); registryIOExceptions
// names the rest and why (sign's Rekor and Fulcio clients are not
// registries). Tests, fixtures and suites are exempt.
//
// Every package: no function declaration outside tests is over 80 lines
// (maxFuncLines), except the Dockerfile instruction switch
// (internal/dockerfile's dispatch, longFuncExceptions). The separate bench
// module and testdata programs are not walked.
//
// Test files follow their package's rule and may also import test code
// (fixtures and the packages under test/), and their own package.
// Every package of the module has a role, and every role in the table names
// a package: a new package fails the test until it is given one.
package depcheck
