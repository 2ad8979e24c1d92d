// Package verify checks a published multi-arch image the way a cluster will
// use it, and reports every finding as one line that says why it matters.
//
// Index, Image and Platform run the checks (coverage, config, arch and
// contract; run and start with Options.Run; attestations with
// Options.Attestations) on images read through go-containerregistry,
// streaming layers in bounded passes. Failures to read the image are
// errors; findings never are. What each check reads and decides, and the
// limits, are in docs/verify.md.
package verify
