package build

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// The binaries a run compiled are the files its entries copy from the
// binaries directory: verify --run asks them --version, and not the other
// files a recipe copies (a downloaded tool, a script).
func TestBuiltPaths(t *testing.T) {
	bin := t.TempDir()
	entries := []rootfs.Entry{
		{Path: "/usr/bin/gitlab-runner-helper", Kind: rootfs.File, Source: filepath.Join(bin, "gitlab-runner-helper.linux-arm64")},
		{Path: "/usr/bin/pgrep", Kind: rootfs.File, Source: filepath.Join(t.TempDir(), "pgrep")},
		{Path: "/usr/bin/helper-tool", Kind: rootfs.File, Source: filepath.Join(bin, "sub", "tool")},
		{Path: "/usr/bin/link", Kind: rootfs.Symlink, Linkname: "gitlab-runner-helper"},
		{Path: "/usr/share/x", Kind: rootfs.File, Source: bin + "-other/x"},
	}
	assert.Equal(t, []string{"/usr/bin/gitlab-runner-helper", "/usr/bin/helper-tool"}, builtPaths(entries, bin))
	assert.Empty(t, builtPaths(entries, t.TempDir()))
}
