// Package dockerfile interprets the part of a Dockerfile that needs no
// container runtime, with BuildKit's own parser, and answers with what
// `docker buildx build` would have put in the image: the runtime config, one
// history step per instruction buildx records, and the files of each layer.
//
// Parse refuses, with "file:line: ..." and the way out, anything that would
// execute code (RUN, ONBUILD, a second FROM, ...); File.Resolve expands the
// global ARGs for one Target; Stage.Apply interprets the instructions on the
// base image's config. Nothing here touches the network, and all three are
// safe for concurrent use. The subset, its fidelity to buildx and its limits
// are in docs/dockerfile.md.
package dockerfile
