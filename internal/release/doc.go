// Package release wires helperbuild's stages into one build: it takes a
// recipe.Plan (images x platforms), resolves every base image once and pins
// it by digest, fails before compiling when a base lacks a platform,
// cross-compiles every binary, checks each binary's ELF header against its
// platform, writes one deterministic layer per COPY/ADD, assembles one OCI
// image per platform and one OCI index per image, and verifies the result
// (coverage, architecture and, when the recipe names one, the GitLab image
// contract) before anything is published. Each platform's image is
// assembled and verified as soon as its binaries exist, while other
// platforms still compile (in job slots no compile needs, on one
// goroutine; no thread ever runs at a lowered priority, which would stall
// the whole process under load); the index-level checks run at the end.
// With Options.Attest, each checked platform image gets an SPDX SBOM and
// SLSA provenance (internal/attest), its base's OS packages read in the
// pass that flattens the base: in the index after the platform images, or
// as referrers (Platform.Attestation) for the destination to publish.
// Options.OnImage gets each platform's image only after its checks passed;
// Options.OnLayer gets the new layers of the platforms assembled once
// nothing compiles while they are written, as streams that end only if the
// platform passes.
//
// PlanMerge and Merge.Run join the part files of a release whose platforms
// were pushed by separate CI jobs (push --by-digest) into the indexes a
// single Build would have made: the parts are checked against each other,
// then each manifest and platform config in the registry (never a layer),
// before anything is written.
//
// Stage packages do not import each other: this package imports them and
// passes values between them (the import rules are written, and checked, in
// internal/depcheck).
package release
