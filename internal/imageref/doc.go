// Package imageref names where images live and reads them from there.
//
// A reference follows skopeo's transports: a plain reference is a registry
// ("registry.example.com/group/helper:v1"), "oci:DIR[:TAG]" an OCI layout
// directory, "oci-archive:FILE[:TAG]" an OCI layout in a tar file and
// "scratch" the empty base. Read resolves a layout, archive or scratch
// reference once and returns the artifact pinned by digest: an image index
// or a single image. A registry reference is read by internal/registry
// (registry.Read), which hands the manifest it fetched to FromRegistry.
// Options says how registries are reached (plain HTTP or an unverified
// certificate only for registries the caller names as insecure, credentials
// from the keychain the caller passes in); internal/registry builds the
// transport from it and explains registry failures (registry.Explain).
// ErrNotFound is what a reference not found is, in a layout or a registry.
//
// With Options.Blobs, the layers of everything Read returns read through one
// run's blob store (Blobs): each blob is fetched once per run, checked
// against its digest and size, and only then visible, so concurrent readers
// of one layer (the platforms of an index, the checks of a build, verify)
// always see the whole blob. A store made with KeepBlobs (in a cache
// directory) serves later runs too, each file checked again before use.
// A foreign (non-distributable) layer, such as a Windows base's OS layers,
// is never fetched: reading it is a ForeignLayerError, and Foreign tells
// readers to skip it.
package imageref
