//go:build e2e

package e2e

import (
	"runtime"
	"strings"
)

// target is one platform the suite builds for, with every name each tool uses for it.
type target struct {
	Platform   string // OCI/containerd form: "linux/arm/v7"
	OS         string // "linux"
	Arch       string // OCI architecture = GOARCH: "arm"
	Variant    string // OCI variant: "v7" (empty for the others)
	DebArch    string // Debian architecture of the busybox-static package: "armhf"
	GitLabArch string // GitLab Runner's arch in tags: "x86_64", "arm", ...
	Machine    string // what `uname -m` prints in a container of this platform
	QEMU       string // QEMU user-mode emulator name suffix: "arm" -> qemu-arm-static
}

// targets lists the five platforms of the busybox base image, in the order helperbuild is
// asked to build them (and so the order expected in every image index).
var targets = []target{
	{"linux/amd64", "linux", "amd64", "", "amd64", "x86_64", "x86_64", "x86_64"},
	{"linux/arm64", "linux", "arm64", "", "arm64", "arm64", "aarch64", "aarch64"},
	{"linux/arm/v7", "linux", "arm", "v7", "armhf", "arm", "armv7l", "arm"},
	{"linux/ppc64le", "linux", "ppc64le", "", "ppc64el", "ppc64le", "ppc64le", "ppc64le"},
	{"linux/s390x", "linux", "s390x", "", "s390x", "s390x", "s390x", "s390x"},
}

// binfmtHandlers are the QEMU binfmt_misc entries the suite needs registered so that
// containerd (runc) can start foreign binaries; riscv64 is there for tests that add it.
var binfmtHandlers = []string{"aarch64", "arm", "ppc64le", "s390x", "riscv64"}

// platformList is the --platforms value for ts.
func platformList(ts []target) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Platform
	}
	return strings.Join(names, ",")
}

// native reports whether binaries of t run on this machine without emulation.
func (t target) native() bool { return t.Arch == runtime.GOARCH }

// slug is t.Platform usable in file names, namespaces and container IDs: "linux-arm-v7".
func (t target) slug() string { return strings.ReplaceAll(t.Platform, "/", "-") }

// emulate returns argv that runs the foreign-architecture program path (with args) under
// QEMU, or directly on the host's own architecture. sysroot, if not empty, is where QEMU
// resolves the program's absolute paths (an unpacked root file system).
func (t target) emulate(sysroot, path string, args ...string) []string {
	if t.native() {
		return append([]string{path}, args...)
	}
	argv := []string{"qemu-" + t.QEMU + "-static"}
	if sysroot != "" {
		argv = append(argv, "-L", sysroot)
	}
	return append(append(argv, path), args...)
}
