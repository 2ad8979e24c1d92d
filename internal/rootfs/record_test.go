package rootfs

import (
	"context"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

// TestReplayBuildsTheSameFS flattens two layers (a whiteout, an opaque
// directory, a hardlink and a broken one) and checks that replaying the
// recorded headers gives the same tree, sources and issues.
func TestReplayBuildsTheSameFS(t *testing.T) {
	lower := tartest.Layer(t, append(tartest.MergedUsr(), tartest.Dir("var/", 0o755), tartest.File("var/a", 0o600, []byte("a")))...)
	upper := tartest.Layer(t,
		tartest.File("etc/.wh.passwd", 0o644, nil),
		tartest.Dir("var/", 0o755), tartest.File("var/.wh..wh..opq", 0o644, nil), tartest.File("var/b", 0o640, []byte("bb")),
		tartest.Hardlink("usr/bin/ls2", "usr/bin/ls"),
		tartest.Hardlink("bad", "etc"))
	want, hs, err := FlattenEachRecorded(context.Background(), []v1.Layer{lower, upper}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, want.Issues(), "the hardlink to a directory is an issue")
	got := Replay(hs)
	require.Equal(t, want, got)
	plain, err := Flatten(context.Background(), []v1.Layer{lower, upper})
	require.NoError(t, err)
	require.Equal(t, plain, want, "recording changes nothing")
}
