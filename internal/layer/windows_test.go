package layer

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// The security descriptor go-containerregistry's and ko's Windows layers
// carry (owner and group BUILTIN\Users), written out as they publish it.
const publishedBuiltinUsersSD = "AQAAgBQAAAAkAAAAAAAAAAAAAAABAgAAAAAABSAAAAAhAgAAAQIAAAAAAAUgAAAAIQIAAA=="

func windowsEntries(t *testing.T) []rootfs.Entry {
	src := t.TempDir()
	return []rootfs.Entry{
		{Path: "/gitlab-runner-helper/gitlab-runner-helper.exe", Kind: rootfs.File, Source: writeFile(t, src, "h.exe", "MZ not really\n"), Mode: 0o755},
		{Path: "/gitlab-runner-helper/README.txt", Kind: rootfs.File, Source: writeFile(t, src, "r", "readme\n"), Mode: 0o644, UID: 1000, GID: 1000},
	}
}

type tarEntry struct {
	name    string
	typ     byte
	records map[string]string
}

func readTar(t *testing.T, r io.Reader) []tarEntry {
	var out []tarEntry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		assert.Equal(t, testEpoch, h.ModTime.UTC(), h.Name)
		assert.Zero(t, h.Uid, h.Name)
		out = append(out, tarEntry{h.Name, h.Typeflag, h.PAXRecords})
	}
}

func TestWindowsLayerFormat(t *testing.T) {
	assert.Equal(t, publishedBuiltinUsersSD, builtinUsersSD, "our SD is the one Windows runtimes are known to accept")
	raw, err := base64.StdEncoding.DecodeString(builtinUsersSD)
	require.NoError(t, err)
	assert.Len(t, raw, 20+16+16, "header and two SIDs of two sub-authorities (8 + 2*4 bytes each)")

	l, err := Write(context.Background(), windowsEntries(t), Options{Dir: t.TempDir(), Epoch: testEpoch, Windows: true})
	require.NoError(t, err)
	require.NoError(t, validate.Layer(l))
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	got := readTar(t, rc)
	var names []string
	for _, e := range got {
		names = append(names, e.name)
		attr := "32"
		if e.typ == tar.TypeDir {
			attr = "16"
		}
		assert.Equal(t, map[string]string{"MSWINDOWS.rawsd": publishedBuiltinUsersSD, "MSWINDOWS.fileattr": attr}, e.records, e.name)
	}
	assert.Equal(t, []string{
		"Files/", "Files/gitlab-runner-helper/", "Files/gitlab-runner-helper/README.txt",
		"Files/gitlab-runner-helper/gitlab-runner-helper.exe", "Hives/",
	}, names)
}

// A Windows layer is as reproducible as a Linux one: same entries in any
// order give the same digest, and the cache keeps the two formats apart.
func TestWindowsLayerDeterministic(t *testing.T) {
	entries := windowsEntries(t)
	a, err := Write(context.Background(), entries, Options{Dir: t.TempDir(), Epoch: testEpoch, Windows: true})
	require.NoError(t, err)
	b, err := Write(context.Background(), []rootfs.Entry{entries[1], entries[0]}, Options{Dir: t.TempDir(), Epoch: testEpoch, Windows: true})
	require.NoError(t, err)
	da, _ := a.Digest()
	db, _ := b.Digest()
	assert.Equal(t, da, db)
	linux, err := Write(context.Background(), entries, Options{Dir: t.TempDir(), Epoch: testEpoch})
	require.NoError(t, err)
	dl, _ := linux.Digest()
	assert.NotEqual(t, da, dl)

	c := &Cache{Dir: t.TempDir()}
	opts := Options{Dir: t.TempDir(), Epoch: testEpoch}
	cl, hit, err := c.Write(context.Background(), entries, opts)
	require.NoError(t, err)
	assert.False(t, hit)
	opts.Windows = true
	cw, hit, err := c.Write(context.Background(), entries, opts)
	require.NoError(t, err)
	assert.False(t, hit, "a Linux layer of the same entries is no hit for a Windows one")
	dcl, _ := cl.Digest()
	dcw, _ := cw.Digest()
	assert.Equal(t, dl, dcl)
	assert.Equal(t, da, dcw)
	_, hit, err = c.Write(context.Background(), entries, opts)
	require.NoError(t, err)
	assert.True(t, hit)
}

func TestWindowsLayerRefusesSymlink(t *testing.T) {
	entries := append(windowsEntries(t), rootfs.Entry{Path: "/gitlab-runner-helper/h.exe", Kind: rootfs.Symlink, Linkname: "gitlab-runner-helper.exe"})
	_, err := Write(context.Background(), entries, Options{Dir: t.TempDir(), Epoch: testEpoch, Windows: true})
	assert.ErrorContains(t, err, `layer entry "/gitlab-runner-helper/h.exe": a Windows layer cannot hold a symlink`)
}
