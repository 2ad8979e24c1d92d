// Package build is a release's build source: Build resolves every base
// once, compiles, checks each binary's header, writes deterministic layers,
// assembles and verifies each platform as soon as its binaries exist, then
// the indexes, with attestations made beside it, and returns them as a
// product.Result for release's one finish. Options take what release's
// session opened (registry options, the temporary directory) as values;
// nothing here opens a session or reads the environment.
package build
