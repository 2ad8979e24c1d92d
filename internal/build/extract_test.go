package build

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// extract copies one file out of a layer into a temp file; the file is
// root's and executable.
func extract(t *testing.T, l v1.Layer, name string) string {
	t.Helper()
	hdr, out := testkit.ExtractFile(t, l, name)
	require.Equal(t, int64(0o755), hdr.Mode&0o7777)
	require.Equal(t, 0, hdr.Uid)
	return out
}
