package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// A layer that reads back larger than its headers said when the tree was
// built (a registry serving other bytes) is stopped at the limit.
func TestUnpackBudgetWhileWriting(t *testing.T) {
	small := tartest.Layer(t, tartest.File("f", 0o644, make([]byte, 10)))
	large := tartest.Layer(t, tartest.File("f", 0o644, make([]byte, 100)))
	tr := rootfs.New()
	require.NoError(t, scan(context.Background(), []v1.Layer{small}, nil, tr, []bool{false}, "", nil))
	dir := filepath.Join(t.TempDir(), "rootfs")
	err := unpack(context.Background(), []v1.Layer{large}, tr, dir, unpackLimits{maxBytes: 50, maxFiles: 10, uid: os.Getuid(), gid: os.Getgid()})
	var big *tooBigError
	require.ErrorAs(t, err, &big)
	assert.ErrorContains(t, err, "more than the 50 B allowed")
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 20: "3.0 MiB", 4 << 30: "4.0 GiB", 1536 << 30: "1.5 TiB"} {
		assert.Equal(t, want, formatBytes(n))
	}
}
