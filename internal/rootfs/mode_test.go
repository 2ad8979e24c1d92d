package rootfs

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestModeMapping(t *testing.T) {
	tests := []struct {
		unix int64
		mode fs.FileMode
	}{
		{0o755, 0o755},
		{0o644, 0o644},
		{0o4755, 0o755 | fs.ModeSetuid},
		{0o2750, 0o750 | fs.ModeSetgid},
		{0o1777, 0o777 | fs.ModeSticky},
		{0o7000, fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky},
		{0, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.mode, FileMode(tt.unix), "%#o", tt.unix)
		assert.Equal(t, tt.unix, UnixMode(tt.mode), "%v", tt.mode)
		assert.Equal(t, tt.mode, tt.mode&ModeBits, "%v holds only ModeBits", tt.mode)
	}
	// Type bits do not cross: tar's and Go's.
	assert.Equal(t, fs.FileMode(0o755), FileMode(0o40755), "tar's c_ISDIR is dropped")
	assert.Equal(t, int64(0o755), UnixMode(fs.ModeDir|0o755), "fs.ModeDir is dropped")
	assert.Equal(t, int64(0o777), UnixMode(fs.ModeSymlink|fs.ModePerm))
}
