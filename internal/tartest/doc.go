// Package tartest builds small in-memory tar streams and uncompressed OCI
// layers for tests.
//
// Entries are written in the order given, as PAX headers, with no
// normalisation: a test can put names, modes, owners and link targets exactly
// as a hostile or sloppy image would. Layers are uncompressed
// (application/vnd.oci.image.layer.v1.tar), which is valid OCI and keeps
// race-enabled tests from spending their time in gzip.
package tartest
