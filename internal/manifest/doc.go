// Package manifest assembles OCI images and image indexes from a base image,
// new layers and a config.
//
// Everything it emits uses OCI media types (a Docker-typed base is rewritten
// to OCI descriptors: the layer bytes are the same gzip tars), carries the
// org.opencontainers.image.* annotations of the release, and is a pure
// function of its inputs: the same base, layers, config and epoch give the
// same digests. Index entries carry mediaType, digest, size and platform,
// never artifactType.
package manifest
