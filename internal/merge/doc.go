// Package merge checks the part files of a release whose platforms separate
// jobs pushed by digest, against each other and then against the manifests
// they name in the registry, and gives each image's index entries in the
// order a single push writes them, before anything is written.
//
// New checks the parts alone: one revision, version, epoch and recipe;
// every image's release platforms each exactly once and none other; the
// same repositories, tags and index annotations. Each refusal is one line
// naming the parts (their files and CI jobs) at fault. Plan.Run then reads
// every entry's manifest where its part's job pushed it, and each platform
// image's config (never a layer), and holds an attestation manifest to
// being about the platform image its entry names. The Result is neutral:
// release assembles the indexes (internal/manifest) and publishes them.
package merge
