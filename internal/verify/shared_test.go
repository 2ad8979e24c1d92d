package verify

import (
	"context"
	"crypto/rand"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// sharedHelperIndex is a helper image for amd64 and arm64 whose manifests
// share a layer, as images on a real base do: a per-arch busybox-style
// base, one gzip layer both platforms hold (the scripts, and 1 MiB of data
// so that reading it takes a while), and a per-arch helper binary.
func sharedHelperIndex(t *testing.T) v1.ImageIndex {
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)
	shared := lay{own: true, gzip: true, entries: []tartest.Entry{
		script("usr/bin/gitlab-runner-build", "#!/bin/bash\n\numask 0000\nexec /bin/bash\n"),
		script("entrypoint", "#!/bin/bash\nset -e\nexec \"$@\"\n"),
		tartest.File("usr/share/helper/data", 0o644, data),
	}}
	img := func(arch string) v1.Image {
		return testImage(t, plat("linux", arch, ""), helperConfigOK(), busyboxBase(bins[arch]), shared,
			own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins[arch])))
	}
	return testIndex(t, listed{amd64, img("amd64")}, listed{arm64, img("arm64")})
}

// Fifty verifications at once, every platform checked in parallel, of one
// index whose manifests share a layer, read the way `helperbuild verify`
// reads it (imageref with one run's blob store), from a registry and from an
// OCI layout: every one passes with no finding. None may see a blob another
// is still fetching, and the registry serves each blob once.
func TestConcurrentVerificationsOfSharedLayers(t *testing.T) {
	idx := sharedHelperIndex(t)
	const runs = 50
	opts := Options{Platforms: []v1.Platform{amd64, arm64}, Contract: ContractHelper, AllFiles: true, Jobs: 2}

	var blobs testkit.BlobCounter
	regRef, err := imageref.Parse(testkit.Registry(t, blobs.Wrap)+"/g/helper:v1", nil)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(regRef.Name, idx))
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendIndex(idx))
	layoutRef, err := imageref.Parse("oci:"+dir, nil)
	require.NoError(t, err)

	for name, ref := range map[string]imageref.Ref{"registry": regRef, "layout": layoutRef} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a, err := registry.Read(ctx, ref, imageref.Options{Blobs: imageref.NewBlobs(t.TempDir())})
			require.NoError(t, err)
			reps := make([]*Report, runs)
			var g errgroup.Group
			for i := range runs {
				o := opts
				o.TempDir = t.TempDir()
				g.Go(func() (err error) {
					reps[i], err = Index(ctx, a.Index, o)
					return err
				})
			}
			require.NoError(t, g.Wait())
			for i, rep := range reps {
				assert.True(t, rep.OK(), "verification %d: %v", i, rep.Findings())
				assert.Empty(t, rep.Findings(), "verification %d", i)
			}
		})
	}
	for d, n := range blobs.Gets() {
		assert.Equal(t, 1, n, "downloads of %s", d)
	}
}
