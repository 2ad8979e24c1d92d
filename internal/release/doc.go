// Package release runs a request end to end: it opens the session and the
// destination, runs the request's source (build.Build, a merge of part
// files, a join of existing images) and ends in one finish: publish with
// tags last, sign, write every output file and return the report, which
// writes itself for a person (Report.WriteSummary).
//
// Run (Prepare, then Execute) is a build or push; PrepareMerge and
// PreparedMerge.Execute join the part files of a fan-out; PrepareIndex
// joins existing images; all end in finish. VerifyTarget.Verify reads and
// checks an image. Sources hand the finish a product.Result; stage
// packages do not import each other: release and the sources pass values
// between them (internal/depcheck). docs/architecture.md has the map and
// the order of the work.
package release
