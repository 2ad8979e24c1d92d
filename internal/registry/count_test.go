package registry

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// TestCountingTransport: go-containerregistry's upload of a layer through
// the transport counts the layer's compressed bytes once, as they go out,
// only for the context that carries the counter; CarryCounter moves the
// counter to another context.
func TestCountingTransport(t *testing.T) {
	repo, err := name.NewRepository(testkit.Registry(t) + "/test/app")
	require.NoError(t, err)
	pusher, err := remote.NewPusher(remote.WithTransport(countingTransport{http.DefaultTransport}))
	require.NoError(t, err)

	l, err := random.Layer(300_000, "application/vnd.oci.image.layer.v1.tar+gzip")
	require.NoError(t, err)
	size, err := l.Size()
	require.NoError(t, err)
	var sent atomic.Int64
	hookCtx := WithCounter(context.Background(), func(n int64) { sent.Add(n) })
	ctx := CarryCounter(t.Context(), hookCtx)
	require.NoError(t, pusher.Upload(ctx, repo, l))
	assert.Equal(t, size, sent.Load())

	// Uploaded again: the registry has it, nothing is sent.
	require.NoError(t, pusher.Upload(ctx, repo, l))
	assert.Equal(t, size, sent.Load())

	// Without a counter nothing is counted.
	l2, err := random.Layer(1000, "application/vnd.oci.image.layer.v1.tar+gzip")
	require.NoError(t, err)
	require.NoError(t, pusher.Upload(t.Context(), repo, l2))
	assert.Equal(t, size, sent.Load())
	assert.Equal(t, t.Context(), CarryCounter(t.Context(), context.Background()))
}
