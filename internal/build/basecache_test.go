package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// walked is every path of f with its Info, and f's issues.
func walked(t *testing.T, f *rootfs.FS) (map[string]rootfs.Info, []string) {
	t.Helper()
	out := map[string]rootfs.Info{}
	require.NoError(t, f.Walk(func(p string, info rootfs.Info) error { out[p] = info; return nil }))
	return out, f.Issues()
}

// TestFlatStoreReadsTheBaseOnce flattens a base with an OS, a package
// database and a Go binary (the Go installation's gofmt), then flattens it
// again in a new run with the same store: the second reads no layer and
// gets the same filesystem, OS and binaries. Another executable's record,
// a record without the OS and a damaged record are not used.
func TestFlatStoreReadsTheBaseOnce(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	bin, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "bin", "gofmt"))
	require.NoError(t, err)
	entries := append(tartest.MergedUsr(),
		tartest.File("etc/os-release", 0o644, []byte("ID=alpine\nVERSION_ID=3.21.0\nPRETTY_NAME=\"Alpine Linux v3.21\"\n")),
		tartest.Dir("lib/", 0o755), tartest.Dir("lib/apk/", 0o755), tartest.Dir("lib/apk/db/", 0o755),
		tartest.File("lib/apk/db/installed", 0o644, []byte("P:musl\nV:1.2.5-r0\nA:x86_64\nL:MIT\no:musl\n\n")),
		tartest.File("usr/bin/tool", 0o755, bin),
		tartest.Hardlink("broken", "etc"))
	img, err := mutate.AppendLayers(empty.Image, tartest.Layer(t, entries...))
	require.NoError(t, err)
	dig, err := img.Digest()
	require.NoError(t, err)
	ctx := context.Background()
	store := &flatStore{dir: filepath.Join(t.TempDir(), "flat"), self: "test-build-id"}

	first := flatBases{readOS: true, store: store}
	want := first.flat(ctx, dig, img)
	require.NoError(t, want.err)
	require.Len(t, want.bins, 1, "gofmt is a Go binary")
	require.NotEmpty(t, want.os.Packages)
	records, err := filepath.Glob(filepath.Join(store.dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, records, 1)

	reads := func(b *flatBases) (*flatBase, int32) {
		var calls atomic.Int32
		fb := b.flat(ctx, dig, countingImage{Image: img, calls: &calls})
		require.NoError(t, fb.err)
		return fb, calls.Load()
	}
	got, n := reads(&flatBases{readOS: true, store: store})
	assert.Zero(t, n, "a re-run reads no base layer")
	assert.Equal(t, want.os, got.os)
	assert.Equal(t, want.bins, got.bins)
	assert.Equal(t, want.skipped, got.skipped)
	wantFS, wantIssues := walked(t, want.fs)
	gotFS, gotIssues := walked(t, got.fs)
	assert.Equal(t, wantFS, gotFS)
	assert.Equal(t, wantIssues, gotIssues)
	assert.NotEmpty(t, gotIssues)

	_, n = reads(&flatBases{readOS: true, store: &flatStore{dir: store.dir, self: "another-build"}})
	assert.EqualValues(t, 1, n, "another helperbuild flattens the base itself")
	noOS, n := reads(&flatBases{store: store})
	assert.EqualValues(t, 1, n, "a record with the OS is not one without")
	assert.Empty(t, noOS.os.Packages)

	require.NoError(t, os.WriteFile(records[0], []byte("{not json"), 0o644))
	again, n := reads(&flatBases{readOS: true, store: store})
	assert.EqualValues(t, 1, n, "a damaged record is read past")
	assert.Equal(t, want.os, again.os)
	got, n = reads(&flatBases{readOS: true, store: store})
	assert.Zero(t, n, "and written again")
	assert.Equal(t, want.bins, got.bins)

	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(records[0], old, old))
	freed, err := (&layer.Cache{Dir: filepath.Dir(store.dir)}).Prune(24 * time.Hour)
	require.NoError(t, err)
	assert.Positive(t, freed, "the layer cache's prune removes a record no run read")
	assert.NoFileExists(t, records[0])
}

// TestNoFlatStoreWithoutCache: no cache directory, nothing kept.
func TestNoFlatStoreWithoutCache(t *testing.T) {
	assert.Nil(t, newFlatStore(nil))
}
