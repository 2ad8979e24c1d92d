// Package join turns images that already exist (registry tags or digests,
// oci: and oci-archive: images, the platform images of indexes) into the
// entries of one multi-arch index, each platform proven by its own binaries
// before anything is written.
//
// Plan resolves every source once (internal/imageref), expands an index into
// its platform images (an attestation entry goes along only with the image it
// is about, as do the referrers and cosign tags its registry keeps about it),
// and reads each image's evidence: every executable ELF file (internal/
// elfcheck) and every .exe (internal/pecheck: machine, console subsystem, Go
// build settings) of every distributable layer, streamed one at a time
// through a temporary file, checked against the platform the config names.
// A Windows image's foreign (non-distributable) base layers are counted,
// never read, copied or uploaded; its os.version is compared with its
// base's config when its manifest names the base (org.opencontainers.
// image.base.name and .digest, the base's layers its first ones), and is
// otherwise taken from its config as it is: the foreign layers cannot say
// their build without being fetched. A config that
// disagrees with its binaries, two sources for one platform, a platform asked
// for that no source offers, a source that is an attestation: each is refused
// in one line naming the source. With Options.FixPlatform a lying config is
// replaced by one that names the binaries' platform (a new config and
// manifest digest, layers untouched) and the entry says so; its attestations,
// referrers and cosign tags, about the old digest, are left behind and
// counted. Entries come in the order of Options.Platforms, else in a fixed
// platform order, Linux first and Windows by build (platform.Ordered), so
// the same sources always give the same index.
package join
