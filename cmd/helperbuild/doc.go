// Command helperbuild builds GitLab Runner helper and runner images for many
// CPU architectures and publishes each as one multi-arch tag, with no Docker
// daemon.
//
// This package is the thin layer: it turns flags and the environment
// (GitLab CI's variables, SOURCE_DATE_EPOCH, Docker credentials) into calls
// of the internal packages, prints results to stdout and progress to
// stderr, and maps errors to exit codes (1 failure, 2 usage, 3 not found, 128+signal).
// Nothing below it reads the environment (internal/depcheck checks it).
package main
