// Package attestspec names attestation manifests as they appear on the
// wire: the in-toto media and predicate types of their layers and the
// annotations by which an image index marks an entry as the attestation
// manifest of one of its platform images (BuildKit's convention,
// docs/attestations.md). internal/attest writes them; publish, release and
// verify recognise them through this package alone, so that "is this index
// entry an attestation?" has one answer everywhere.
package attestspec
