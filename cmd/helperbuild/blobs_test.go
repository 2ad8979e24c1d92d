package main

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// pushSharedIndex puts an amd64+arm64 index whose manifests share a layer
// into a registry that counts blob downloads in blobs, as g/base:1, and
// returns the reference.
func pushSharedIndex(t *testing.T, blobs *testkit.BlobCounter) string {
	t.Helper()
	ref := testkit.Registry(t, blobs.Wrap) + "/g/base:1"
	idx := testkit.SharedIndex(t, 1<<20, 4096, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	require.NoError(t, remote.WriteIndex(testkit.Ref(t, ref), idx))
	return ref
}

func assertEachBlobOnce(t *testing.T, blobs *testkit.BlobCounter) {
	t.Helper()
	gets := blobs.Gets()
	require.NotEmpty(t, gets)
	for d, n := range gets {
		assert.Equal(t, 1, n, "downloads of %s", d)
	}
}

// verify checks the platforms of an index in parallel, and a layer they
// share is read by each: it is downloaded once, and each reads all of it.
func TestVerifyDownloadsASharedLayerOnce(t *testing.T) {
	var blobs testkit.BlobCounter
	ref := pushSharedIndex(t, &blobs)
	code, _, stderr := run(t, baseEnv(), "verify", "--jobs", "2", "--all-files", "--platforms", "linux/amd64,linux/arm64", ref)
	require.Equal(t, 0, code, stderr)
	assertEachBlobOnce(t, &blobs)
}

// A push reads its base's layers to lay the new layers onto the base's
// filesystem and again to upload them to another registry: each blob is
// downloaded once per run.
func TestPushDownloadsEachBaseBlobOnce(t *testing.T) {
	var blobs testkit.BlobCounter
	base := pushSharedIndex(t, &blobs)
	dest := testkit.Registry(t)
	helloModule(t)
	code, _, stderr := run(t, baseEnv(), "push", "--platforms", "linux/amd64,linux/arm64", "--base", base,
		"--tag", dest+"/g/hello:v1", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	assertEachBlobOnce(t, &blobs)
}
