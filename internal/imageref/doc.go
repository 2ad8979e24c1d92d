// Package imageref names where images live and reads them from there.
//
// A reference follows skopeo's transports: a plain reference is a registry
// ("registry.example.com/group/helper:v1"), "oci:DIR[:TAG]" an OCI layout
// directory, "oci-archive:FILE[:TAG]" an OCI layout in a tar file and
// "scratch" the empty base. Read resolves a reference once and returns the
// artifact pinned by digest: an image index or a single image. Plain HTTP or
// an unverified certificate is allowed only for registries the caller names
// as insecure; credentials come from the keychain the caller passes in.
package imageref
