// Package imageref names where images live and reads them from there.
//
// A reference follows skopeo's transports: a plain reference is a registry
// ("registry.example.com/group/helper:v1"), "oci:DIR[:TAG]" an OCI layout
// directory, "oci-archive:FILE[:TAG]" an OCI layout in a tar file and
// "scratch" the empty base. Read resolves a reference once and returns the
// artifact pinned by digest: an image index or a single image. Plain HTTP or
// an unverified certificate is allowed only for registries the caller names
// as insecure; credentials come from the keychain the caller passes in.
//
// With Options.Blobs, the layers of everything Read returns read through one
// run's blob store (Blobs): each blob is fetched once per run, checked
// against its digest and size, and only then visible, so concurrent readers
// of one layer (the platforms of an index, the checks of a build, verify)
// always see the whole blob.
package imageref
