// Package scaffold infers a first helperbuild.yaml and a GitLab CI
// fragment from a Go repository, as `helperbuild init` writes them.
//
// Inspect asks `go list` for the module's packages and finds the main
// packages of GitLab Runner's helper and runner (apps/gitlab-runner-helper,
// and the module root or a gitlab-runner directory) and the package that
// declares GitLab Runner's common-style VERSION, REVISION, BRANCH and
// BUILT variables (a package named common first). Recipe and CI render
// what it found; they are pure functions of it, so the same repository
// always gives the same files. The recipe uses helperbuild's built-in
// Dockerfiles, the five platforms GitLab publishes, GitLab's
// <arch>-v<version> platform tags and BASE_IMAGE from the caller (scratch
// builds with no registry); the contract lines are written commented out.
package scaffold
