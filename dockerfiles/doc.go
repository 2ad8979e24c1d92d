// Package dockerfiles holds helperbuild's built-in recipes for the two images
// GitLab Runner ships, gitlab-runner-helper and gitlab-runner, in the same
// form as GitLab Runner's own Dockerfiles: a BASE_IMAGE argument for the
// prepared multi-arch base and one COPY of the cross-compiled binary from the
// binary_dir context (plus clear-docker-cache from packaging_dir for the
// runner). They use no RUN, so helperbuild can assemble them without a
// container runtime. The files are embedded; Default returns them by image name.
package dockerfiles
