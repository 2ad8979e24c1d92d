package imageref

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

var (
	linuxAMD64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	linuxARM64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

// readAllLayers reads every layer of every platform of a, compressed and
// uncompressed, and checks the bytes against the digest and diff ID.
func readAllLayers(a *Artifact) error {
	ps, err := a.Platforms()
	if err != nil {
		return err
	}
	for _, p := range ps {
		img, _, err := a.ImageFor(p)
		if err != nil {
			return err
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		for _, l := range layers {
			d, _ := l.Digest()
			if err := hashes(l.Compressed, d); err != nil {
				return err
			}
			diffID, _ := l.DiffID()
			if err := hashes(l.Uncompressed, diffID); err != nil {
				return err
			}
		}
	}
	return nil
}

func hashes(open func() (io.ReadCloser, error), want v1.Hash) error {
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	got, _, err := v1.SHA256(rc)
	if err != nil {
		return err
	}
	if got != want {
		return &mismatch{got, want}
	}
	return nil
}

type mismatch struct{ got, want v1.Hash }

func (m *mismatch) Error() string { return "read " + m.got.String() + ", want " + m.want.String() }

// readConcurrently runs n readAllLayers at once and returns the first error.
func readConcurrently(a *Artifact, n int) error {
	var g errgroup.Group
	for range n {
		g.Go(func() error { return readAllLayers(a) })
	}
	return g.Wait()
}

// Many readers of an index whose platforms share a layer, at once: every
// one reads the whole of every blob, and the registry serves each blob once.
func TestBlobsFetchEachBlobOnce(t *testing.T) {
	reg := pushShared(t, 1<<20, linuxAMD64, linuxARM64)
	ref := reg.ref
	dir := filepath.Join(t.TempDir(), "blobs")
	a, err := readRegistry(context.Background(), ref, Options{Blobs: NewBlobs(dir)})
	require.NoError(t, err)

	require.NoError(t, readConcurrently(a, 20))
	gets := reg.blobs.Gets()
	assert.Len(t, gets, 5, "two configs, one shared layer, one own layer per platform")
	for d, n := range gets {
		assert.Equal(t, 1, n, "downloads of %s", d)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "no temporary file is left: %s", e.Name())
	}
	assert.Len(t, entries, 3)
}

// While a blob is being downloaded, nothing is at its final name: a reader
// can only ever open a complete, checked file.
func TestBlobsNoPartialFileIsVisible(t *testing.T) {
	reg := pushShared(t, 256<<10, linuxAMD64)
	ref, layers := reg.ref, reg.layers
	shared, _ := layers[0].Digest()

	halfway, release := make(chan struct{}), make(chan struct{})
	reg.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+shared.String()) {
			return false
		}
		data, err := layers[0].Compressed()
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		defer data.Close()
		size, _ := layers[0].Size()
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Header().Set("Docker-Content-Digest", shared.String())
		_, _ = io.CopyN(w, data, size/2)
		http.NewResponseController(w).Flush()
		close(halfway)
		<-release
		_, _ = io.Copy(w, data)
		return true
	})
	dir := filepath.Join(t.TempDir(), "blobs")
	a, err := readRegistry(context.Background(), ref, Options{Blobs: NewBlobs(dir)})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- readAllLayers(a) }()
	<-halfway
	assert.NoFileExists(t, filepath.Join(dir, "sha256-"+shared.Hex), "half a blob is never at its final name")
	close(release)
	require.NoError(t, <-done)
	assert.FileExists(t, filepath.Join(dir, "sha256-"+shared.Hex))
}

// A failed download is an error for the readers waiting on it, and the next
// reader downloads again.
func TestBlobsFailedFetchIsNotRemembered(t *testing.T) {
	reg := pushShared(t, 4096, linuxAMD64)
	ref, layers := reg.ref, reg.layers
	shared, _ := layers[0].Digest()
	reg.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+shared.String()) {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
		return false
	})
	a, err := readRegistry(context.Background(), ref, Options{Blobs: NewBlobs(t.TempDir())})
	require.NoError(t, err)
	err = readAllLayers(a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blob "+shared.String()+": ")
	reg.setFail(nil)
	require.NoError(t, readAllLayers(a))
}

// Layers of a registry base stay mountable through the store, so a push to
// another repository of the registry still mounts them.
func TestBlobsKeepLayersMountable(t *testing.T) {
	ref := pushShared(t, 4096, linuxAMD64).ref
	a, err := readRegistry(context.Background(), ref, Options{Blobs: NewBlobs(t.TempDir())})
	require.NoError(t, err)
	img, _, err := a.ImageFor(linuxAMD64)
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	for _, l := range layers {
		ml, ok := l.(*remote.MountableLayer)
		require.True(t, ok, "%T", l)
		assert.Equal(t, "base/shared", ml.Reference.Context().RepositoryStr())
		_, isStored := ml.Layer.(*storedLayer)
		assert.True(t, isStored, "the mountable layer reads through the store")
	}
	// The config too: a push to another repository mounts it (helperbuild
	// index copies whole images).
	cl, err := partial.ConfigLayer(img)
	require.NoError(t, err)
	ml, ok := cl.(*remote.MountableLayer)
	require.True(t, ok, "config: %T", cl)
	assert.Equal(t, "base/shared", ml.Reference.Context().RepositoryStr())
}

// An OCI layout's blobs are read where they are, after a check of their
// digest; a corrupt blob is an error naming it, and once it is repaired the
// next reader succeeds.
func TestBlobsLayoutCheckedInPlace(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	idx := testkit.SharedIndex(t, 64<<10, 4096, linuxAMD64, linuxARM64)
	require.NoError(t, p.AppendIndex(idx))
	store := filepath.Join(t.TempDir(), "blobs")
	a, err := Read(context.Background(), mustParse(t, "oci:"+dir), Options{Blobs: NewBlobs(store)})
	require.NoError(t, err)
	require.NoError(t, readConcurrently(a, 20))
	assert.NoDirExists(t, store, "nothing is copied out of a layout")

	img, err := idx.Image(mustDigests(t, idx)[1])
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	own, _ := layers[1].Digest()
	blob := filepath.Join(dir, "blobs", own.Algorithm, own.Hex)
	good, err := os.ReadFile(blob)
	require.NoError(t, err)
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0xff
	require.NoError(t, os.WriteFile(blob, bad, 0o644))

	a, err = Read(context.Background(), mustParse(t, "oci:"+dir), Options{Blobs: NewBlobs(store)})
	require.NoError(t, err)
	err = readAllLayers(a)
	require.Error(t, err)
	sum := sha256.Sum256(bad)
	assert.Contains(t, err.Error(), "blob "+own.String()+": content is corrupt: "+strconv.Itoa(len(bad))+" bytes hashing to sha256:"+hex.EncodeToString(sum[:]))
	assert.Contains(t, err.Error(), "the layout is damaged: write it again")
	require.NoError(t, os.WriteFile(blob, good, 0o644))
	require.NoError(t, readAllLayers(a))
}

// sharedRegistry is an in-process registry holding a testkit.SharedIndex
// as base/shared:1. It counts blob downloads; fail, when set, sees every
// request first and answers it itself by returning true.
type sharedRegistry struct {
	ref    Ref
	layers []v1.Layer // the first image's, the shared one first
	blobs  testkit.BlobCounter
	mu     sync.Mutex
	fail   func(w http.ResponseWriter, r *http.Request) bool
}

func (s *sharedRegistry) setFail(fail func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fail
}

func (s *sharedRegistry) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		fail := s.fail
		s.mu.Unlock()
		if fail == nil || !fail(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

func pushShared(t *testing.T, sharedBytes int64, ps ...v1.Platform) *sharedRegistry {
	t.Helper()
	s := &sharedRegistry{}
	s.ref = mustParse(t, testkit.Registry(t, s.wrap, s.blobs.Wrap)+"/base/shared:1")
	idx := testkit.SharedIndex(t, sharedBytes, 4096, ps...)
	require.NoError(t, remote.WriteIndex(s.ref.Name, idx))
	img, err := idx.Image(mustDigests(t, idx)[0])
	require.NoError(t, err)
	s.layers, err = img.Layers()
	require.NoError(t, err)
	return s
}

func mustDigests(t *testing.T, idx v1.ImageIndex) []v1.Hash {
	t.Helper()
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var out []v1.Hash
	for _, d := range im.Manifests {
		out = append(out, d.Digest)
	}
	return out
}

// readRegistry reads a registry reference as internal/registry's Read
// does (which this package's tests cannot import): one remote.Get, then
// FromRegistry.
func readRegistry(ctx context.Context, ref Ref, o Options) (*Artifact, error) {
	desc, err := remote.Get(ref.Name, append([]remote.Option{remote.WithContext(ctx)}, o.Remote...)...)
	if err != nil {
		return nil, err
	}
	return FromRegistry(ref, desc, o.Blobs)
}

// A kept store serves a later run's layers from its files, checked: a
// damaged file is fetched again. A file another run's Prune removed after
// this run checked it is fetched again when opened.
func TestKeptBlobsServeLaterRuns(t *testing.T) {
	reg := pushShared(t, 4096, linuxAMD64)
	dir := filepath.Join(t.TempDir(), "bases")
	read := func() {
		t.Helper()
		a, err := readRegistry(context.Background(), reg.ref, Options{Blobs: KeepBlobs(dir)})
		require.NoError(t, err)
		require.NoError(t, readAllLayers(a))
	}
	total := func() int { // layer downloads (configs are ggcr's to fetch here)
		n := 0
		gets := reg.blobs.Gets()
		for _, l := range reg.layers {
			d, _ := l.Digest()
			n += gets[d.String()]
		}
		return n
	}
	read()
	fetched := total()
	require.Positive(t, fetched)
	read()
	assert.Equal(t, fetched, total(), "a later run fetches no blob the store has")

	shared, _ := reg.layers[0].Digest()
	file := filepath.Join(dir, "sha256-"+shared.Hex)
	require.NoError(t, os.WriteFile(file, []byte("damaged"), 0o644))
	read()
	assert.Equal(t, fetched+1, total(), "the damaged blob is fetched again")

	blobs := KeepBlobs(dir)
	a, err := readRegistry(context.Background(), reg.ref, Options{Blobs: blobs})
	require.NoError(t, err)
	require.NoError(t, readAllLayers(a)) // checked and remembered by this run
	require.NoError(t, os.Remove(file))  // as a Prune of another run would
	require.NoError(t, readAllLayers(a))
	assert.Equal(t, fetched+2, total(), "fetched again once gone")
	assert.FileExists(t, file)
}

// The images of an index are fetched at once, not one after another: a
// registry that answers no manifest until two are asked for still serves
// both (30 s is only a guard against a hang; the two arrive together).
func TestStoredIndexFetchesImagesAtOnce(t *testing.T) {
	reg := pushShared(t, 1024, linuxAMD64, linuxARM64)
	a, err := readRegistry(context.Background(), reg.ref, Options{Blobs: NewBlobs(t.TempDir())})
	require.NoError(t, err)
	var asked atomic.Int32
	both := make(chan struct{})
	var waitedOut atomic.Bool
	reg.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/sha256:") {
			if asked.Add(1) == 2 {
				close(both)
			}
			select {
			case <-both:
			case <-time.After(30 * time.Second):
				waitedOut.Store(true)
			}
		}
		return false
	})
	var g errgroup.Group
	for _, d := range mustDigests(t, a.Index) {
		g.Go(func() error {
			_, err := a.Index.Image(d)
			return err
		})
	}
	require.NoError(t, g.Wait())
	assert.False(t, waitedOut.Load(), "the second manifest was asked for only after the first was answered")
	assert.EqualValues(t, 2, asked.Load())
}
