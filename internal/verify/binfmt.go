package verify

import (
	"fmt"
	"os"
	"strings"

	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// qemuBinfmt reads the binfmt_misc entry qemu-user-static ships for arch
// (":qemu-aarch64:M::MAGIC:MASK:INTERPRETER:FLAGS").
func qemuBinfmt(arch string) (sandbox.Binfmt, error) {
	file := "/usr/lib/binfmt.d/qemu-" + arch + ".conf"
	b, err := os.ReadFile(file)
	if err != nil {
		return sandbox.Binfmt{}, fmt.Errorf("%w (apt-get install qemu-user-static)", err)
	}
	return parseBinfmt(file, string(b))
}

// parseBinfmt parses a binfmt.d file's one magic entry, matched at offset 0.
func parseBinfmt(file, text string) (sandbox.Binfmt, error) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) < 7 || f[0] != "" || f[2] != "M" || (f[3] != "" && f[3] != "0") || f[4] == "" {
			return sandbox.Binfmt{}, fmt.Errorf("%s: %q is not a magic entry at offset 0", file, line)
		}
		return sandbox.Binfmt{Name: f[1], Magic: f[4], Mask: f[5]}, nil
	}
	return sandbox.Binfmt{}, fmt.Errorf("%s has no entry", file)
}
