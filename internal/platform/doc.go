// Package platform turns user-written platform specifiers ("linux/arm/v7") into
// normalised OCI platforms and maps them onto the Go toolchain's environment.
//
// Parsing is strict: os/arch[/variant] is required, because containerd's parser
// would silently fill a missing part from the host. Normalisation follows
// containerd/platforms ("linux/arm" is linux/arm/v7, "linux/arm64/v8" is
// linux/arm64, "linux/amd64/v1" is linux/amd64), so two spellings of the same
// platform always compare equal and always print the same.
package platform
