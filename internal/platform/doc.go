// Package platform turns user-written platform specifiers ("linux/arm/v7",
// "windows/amd64:10.0.20348") into normalised OCI platforms, and is the one
// home of what helperbuild knows about Go's Linux and Windows ports.
//
// Parsing is strict: os/arch[/variant] is required, because containerd's parser
// would silently fill a missing part from the host. Normalisation follows
// containerd/platforms ("linux/arm" is linux/arm/v7, "linux/arm64/v8" is
// linux/arm64, "linux/amd64/v1" is linux/amd64), so two spellings of the same
// platform always compare equal and always print the same. A Windows platform
// may carry an OS version (a Windows build, written after a colon as
// go-containerregistry does, or in parentheses as containerd does); it is part
// of the platform's identity, and Ordered puts Windows entries after the
// Linux ones, by build.
//
// The port table answers, per architecture: whether Go builds it for a
// container image (Known, Buildable), the toolchain variables that select it
// (GoEnv: GOOS, GOARCH, GOARM for arm variants, GOAMD64 for amd64 levels;
// FromGoBuild reads them back from a binary's build settings), which variables
// only GoEnv may set (IsTargetVar), what the ELF header of its Linux
// executables holds (ELFOf, ArchOfELF), the PE machine of its Windows ones
// (PEMachineOf, ArchOfPE) and qemu-user's name for it (QemuArch).
package platform
