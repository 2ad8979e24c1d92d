// Package gitlabbase builds, for tests, the layer of a GitLab-like base
// image from real Debian packages of one architecture: bash-static,
// busybox-static with its applet links, dumb-init with the libc it is
// linked against, a CA bundle, the /entrypoint scripts of GitLab's helper
// and runner images, gitlab-runner-build and a gitlab-runner user (uid 100,
// group 65533); and the same with one seeded defect, for the start-up runs
// of verify to find. Only tests import it (internal/depcheck checks it).
package gitlabbase
