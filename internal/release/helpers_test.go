package release

import (
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// epoch is the tests' release time (SOURCE_DATE_EPOCH).
var epoch = time.Unix(1700000000, 0).UTC()

func platforms(t *testing.T, s string) []v1.Platform {
	ps, err := platform.ParseList(s)
	require.NoError(t, err)
	return ps
}
