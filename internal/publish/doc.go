// Package publish puts a release's image indexes where they belong: an OCI
// layout directory, an OCI layout tar, a registry, or a registry by digest
// (one CI job's share of a release: no index, no tag, a part file that
// merge reads).
//
// Each of these is a Destination (Layout, Archive, Registry, ByDigest): the command
// chooses one; the release calls its Hooks while it builds (a registry
// checks its permission first and uploads blobs as platforms are checked)
// and Publish once every image is built and checked.
//
// To a registry it publishes in a fixed order so that no tag ever points at
// something incomplete: every blob and manifest of every image is pushed by
// digest first (blobs the registry already has are skipped, base layers are
// mounted from their source repository when it is on the same registry),
// then every manifest is checked by digest, and only then are tags written:
// index tags, then per-platform tags, "latest" last. A failure before the
// tag phase leaves every existing tag as it was. Manifests with a subject
// (attestations) are PUT raw by digest after the images they are about;
// an image's referrers on a registry without the referrers API are listed
// by the fallback tag sha256-<hex>, planned before the tag phase (a
// registry that resolves that tag to the subject is refused there) and
// written first in it, each read back, and all read again after a pause:
// another writer's index that erased the release's referrers gets them
// added again (the registry API has no conditional PUT to do better).
// Cosign tags an image brings along (sha256-<hex>.sig, .att) are merged with
// what the repository holds under them, pushed by digest before signing
// (which adds to them) and tagged in the tag phase before the release's tags.
//
// A layout (and the layout inside an archive) is written with ordinary
// modes, directories 0755 and files 0644 before the umask; its index.json
// lists each entry by media type, digest, size and name, with no
// artifactType, and is replaced in one rename after every blob is in
// place. CheckLayoutDir and CheckArchiveFile tell beforehand whether an
// output can be written.
package publish
