// Package attest writes what a release says about each platform image it
// built: an SPDX 2.3 SBOM and SLSA v1 provenance, each as an in-toto
// Statement v1 whose subject is the platform manifest, and the manifests
// that carry them to a registry or layout.
//
// SBOM describes one platform image: the image (a pkg:oci purl with its
// digest and platform), its base (DESCENDANT_OF, with its digest), the
// base's operating system and installed packages (ReadOS, or the parsers
// ParseAPKInstalled, ParseDpkgStatus and ParseOSRelease on readers the
// caller opens), each Go binary helperbuild put in it (ReadBinary,
// OpenBinary) and each the base holds (BaseScan), from its build info: the main module, every module compiled
// in (a replaced module is its replacement) with its h1: checksum, and the
// Go standard library. Provenance records how the image was made: the
// release's external parameters (source, recipe, images, platforms,
// version), internal ones (helperbuild and Go versions, GOFLAGS, build
// flags, ldflags), the resolved dependencies (git commit, base digests, Go
// toolchain) and the builder (GitLab CI project or LocalBuilderID).
//
// Everything is a pure function of its inputs: the same spec gives the same
// bytes. Nothing reads the clock, the environment or a random source; SPDX
// element IDs and the document namespace are derived from digests of what
// they name; lists are sorted; JSON comes from encoding/json. With
// ProvenanceMin (the default) a provenance holds nothing run-specific, so
// attestations keep the index digest reproducible; ProvenanceMax adds the
// CI job, the runner and the run's times, passed in by the caller.
//
// AttestationManifest puts a platform's statements into one manifest laid
// out as BuildKit lays it out (artifactType
// application/vnd.docker.attestation.manifest.v1+json, the empty config,
// the platform manifest as subject, one application/vnd.in-toto+json layer
// per statement), and its IndexEntry is the image index entry that
// `docker buildx imagetools inspect` and Docker Scout read (platform
// unknown/unknown, vnd.docker.reference.* annotations). StatementReferrer
// and SPDXReferrer make OCI 1.1 referrers instead. Each is an Artifact: a
// v1.Image over raw manifest bytes, ready to write or push (see Artifact
// for what go-containerregistry's remote writers add to a push).
//
// docs/attestations.md documents the build type, the builder IDs and the
// calls the release wiring makes.
package attest
