// Package part is the part file: what one CI job of a fanned-out release
// (push --by-digest) pushed, and what the final merge needs to publish the
// indexes a single push would have published. A part names, per image, its
// repository, the release's platforms in order, the index annotations, the
// index and platform tags, and the index entries the job contributes as OCI
// descriptors, so entries of any kind (platform images, attestation
// manifests) travel without a format change.
//
// The format is JSON with a schemaVersion and a mediaType; Read refuses a
// file that is not a part, or a part of a schema it does not know, naming
// the file.
package part
