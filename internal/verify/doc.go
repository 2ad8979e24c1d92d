// Package verify checks a published multi-arch image the way a cluster will
// use it, and reports every finding as one line that says why it matters.
//
// Index and Image read an image through go-containerregistry (a registry, an
// OCI layout, anything that is a v1.ImageIndex or v1.Image) and run, per
// platform:
//
//   - coverage: each expected platform is listed exactly once (an arm entry
//     without a variant does not stand for linux/arm/v7); missing and extra
//     platforms, entries that are not OCI or Docker image manifests and
//     single images where an index was expected are index-level problems.
//     Attestation manifests (unknown/unknown) are skipped.
//   - config: the image config's os/architecture/variant equals the index
//     entry's platform.
//   - arch: every executable regular file starting with the ELF magic in the
//     image's own layers (those whose history entry carries BuildKit's
//     "buildkit.dockerfile.v0" comment; all layers when the history does not
//     map onto them), or with Options.AllFiles in the flattened filesystem,
//     matches the platform (internal/elfcheck); Go binaries also by their
//     build info, and CGO_ENABLED=1 is a warning.
//   - contract: the files, scripts, config and user GitLab Runner and its
//     Helm chart expect (docs/gitlab-image-contract.md), "helper" or
//     "runner", on the filesystem a runtime would present.
//   - run: with Options.Run, each Go program of the own layers (build info
//     naming a main package; never a base's busybox or coreutils) with
//     --version and /bin/sh -c true, each in a sandbox of its own (internal/sandbox:
//     Linux namespaces, the image as root through a throwaway overlay, no
//     network, rlimits, the image config's environment), under qemu-user
//     inside it (natively for amd64 on amd64); an "OS/Arch:" line must name
//     the platform. A program that fails, is killed, times out, prints
//     more than 1 MiB or whose processes together reach the run's memory
//     limit fails the check; where the machine gives runs no cgroup, the
//     check warns that only per-process limits apply. Where no sandbox can
//     be made, Index and Image return an error (sandbox.ErrUnavailable) and
//     run nothing.
//   - start: with Options.Run and a Contract, the image started as GitLab
//     starts it (docs/startup-run.md): the runner as the Helm chart does
//     (uid 100, group 65533, no capabilities, its scripts' tools), the
//     helper as the executors do (as root); each failure names its step,
//     user, exit status and output tail (StepResult). The tree is unpacked
//     as a node presents it (owners, modes, foreign ELF files refused), and
//     the contract's findings about what a start exercised become hints.
//   - attestations: with Options.Attestations, each platform image has an
//     SBOM (in-toto, SPDX) and a provenance (SLSA v1) whose subject is its
//     manifest, in the index (BuildKit's attestation manifests) or else
//     among Options.Referrers; the SBOM's Go modules per binary of the own
//     layers equal the binary's build info, and the provenance's base
//     images equal the manifest's org.opencontainers.image.base.digest.
//     The statements are decoded here (docs/attestations.md), not with
//     internal/attest: stages do not import each other.
//
// Options.Nodes (ParseNodes) adds a problem for every node whose platform
// has no image in the index. Platform runs the per-platform checks alone,
// so a builder can check each image as soon as it exists; Index then takes
// those results through Options.Checked instead of reading the images again.
//
// Layers are streamed, never held in memory. The flattened filesystem is
// internal/rootfs's metadata tree, built by applying layers in order with
// overlayfs semantics: ".wh.NAME" deletes NAME from lower layers,
// ".wh..wh..opq" hides a directory's lower contents, a non-directory
// replaces a directory, a directory replaces a non-directory parent,
// hardlinks share their target's contents; symlinks, relative and absolute,
// resolve inside the image's root (at most 40). Contents are read back from the layers only for the few
// files a check needs; ELF files are spooled one at a time to a temporary
// file (Options.TempDir or os.TempDir) and removed right after. Each check
// streams the layers it needs again and platforms are checked in parallel,
// so callers verifying a remote image should read it through a store that
// fetches each blob once and only hands out complete ones (internal/imageref's
// Blobs); go-containerregistry's pkg/v1/cache lets a concurrent reader see a
// partly written file. Run is the only check
// that writes the filesystem to disk: TempDir/<n> per platform, through an
// os.Root so nothing lands outside it, owned by the sandbox's uid, at most
// UnpackMaxBytes and UnpackMaxFiles (checked from the headers before
// writing; a larger image fails the check), removed after the platform's
// runs; the caller removes TempDir.
//
// Every check's first pass over a platform's layers stops once they have
// decompressed to more than LayersMaxBytes or held more than
// LayersMaxEntries entries: a failed arch check, and nothing of the files is checked. Later
// passes read the same (content-addressed) layers, so they stay within it.
//
// Failures to read the image are errors; findings are never errors.
// Every failure and warning is reported once: a problem of a listed entry
// is that entry's coverage check, only what belongs to no entry (a missing
// platform, a node without an image) is a Report.Problem. Findings lists
// them as objects (platform, check, path, reason); WriteTable prints the
// per-platform grid with one line per finding under it, WriteJSON the same
// findings as objects; FailedError carries a failed Report as an error.
package verify
