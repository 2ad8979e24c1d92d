// Package release runs a request end to end: it opens the destination,
// builds (or merges parts), publishes with tags last, writes every output
// file and returns the report, which writes itself for a person
// (Report.WriteSummary).
//
// Run (Prepare, then Execute) is a build or push; PrepareMerge and
// PreparedMerge.Execute join the part files of a fan-out; both end in one
// tail (publish, report, files). VerifyTarget.Verify reads and checks an
// image. Build is the pipeline itself: resolve every base once, compile,
// check each binary's ELF header, write deterministic layers, assemble and
// verify each platform as soon as its binaries exist, then the indexes;
// attestations are made beside it. Stage packages do not import each
// other: this package passes values between them (internal/depcheck).
// docs/architecture.md has the map and the order of the work.
package release
