package testkit

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// Platform is platform.Parse(s), failing t on an error.
func Platform(t testing.TB, s string) v1.Platform {
	t.Helper()
	p, err := platform.Parse(s)
	require.NoError(t, err)
	return p
}

// Ref is name.ParseReference(s), failing t on an error.
func Ref(t testing.TB, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	require.NoError(t, err)
	return r
}
