package registry

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

// TestGetAll: every manifest is handed to use with its own index; the
// error returned is the first in the order of refs, not of completion.
func TestGetAll(t *testing.T) {
	host := testkit.Registry(t)
	repo, err := name.NewRepository(host + "/g/app")
	require.NoError(t, err)
	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 16, 1)
	require.NoError(t, remote.Write(repo.Tag("v1"), img))
	d, err := img.Digest()
	require.NoError(t, err)
	missing := v1.Hash{Algorithm: "sha256", Hex: "0000000000000000000000000000000000000000000000000000000000000001"}
	refs := []name.Digest{repo.Digest(d.String()), repo.Digest(missing.String()), repo.Digest(d.String()), repo.Digest(missing.String())}

	var seen [4]atomic.Bool
	err = GetAll(t.Context(), imageref.Options{Insecure: []string{host}}, refs, 2, func(i int, desc *remote.Descriptor, err error) error {
		seen[i].Store(true)
		if err != nil {
			return errors.New("ref " + string(rune('0'+i)))
		}
		assert.Equal(t, d, desc.Digest, "ref %d", i)
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, "ref 1", err.Error(), "the first failure in the order of refs")
	for i := range seen {
		assert.True(t, seen[i].Load(), "ref %d handed to use", i)
	}
}

func TestRetriesCheck(t *testing.T) {
	assert.NoError(t, Retries{}.Check())
	assert.EqualError(t, Retries{Retries: -1}.Check(), "--retries must be 0 or more, got -1")
	assert.EqualError(t, Retries{Timeout: -time.Second}.Check(), "--timeout must be 0 (none) or more, got -1s")
}
