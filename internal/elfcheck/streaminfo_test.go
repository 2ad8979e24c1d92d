package elfcheck

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// StreamGoInfo agrees with debug/buildinfo on real programs of the host:
// Go ones (the test binary holds the magic also as a literal of
// debug/buildinfo, before the blob), and others; read whole, a byte at a
// time and in odd pieces (blobs across window boundaries).
func TestStreamGoInfoAgreesWithDebugBuildinfo(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	files := []string{self}
	for _, pattern := range []string{"/usr/local/bin/*", "/usr/bin/sk*", "/usr/bin/tr*", "/bin/true"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	goSeen, otherSeen := 0, 0
	var s InfoStreamer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !IsELF(data) || len(data) > 200<<20 {
			continue
		}
		want, werr := buildinfo.Read(bytes.NewReader(data))
		got, err := s.Read(bytes.NewReader(data))
		require.NoError(t, err, f)
		if werr != nil {
			assert.Nil(t, got, "%s: not Go for debug/buildinfo (%v)", f, werr)
			otherSeen++
			continue
		}
		goSeen++
		require.NotNil(t, got, f)
		assert.Equal(t, want.String(), got.String(), f)
		assert.Equal(t, want.GoVersion, got.GoVersion, f)
		if goSeen == 1 {
			got, err = StreamGoInfo(iotest.HalfReader(bytes.NewReader(data)))
			require.NoError(t, err)
			assert.Equal(t, want.String(), got.String(), "%s read in halves", f)
		}
	}
	require.NotZero(t, goSeen, "the test binary at least")
	require.NotZero(t, otherSeen, "a non-Go ELF program (/bin/true)")
}

func TestStreamGoInfoEdges(t *testing.T) {
	got, err := StreamGoInfo(bytes.NewReader([]byte("#!/bin/sh\n")))
	assert.NoError(t, err)
	assert.Nil(t, got, "not ELF")

	// A pre-1.18 blob: header only, the version flag clear.
	blob := append(bytes.Repeat([]byte{0}, 48), buildInfoMagic...)
	blob = append(blob, 8, 0)
	blob = append(blob, bytes.Repeat([]byte{0}, 64)...)
	copy(blob, "\x7fELF")
	_, err = StreamGoInfo(bytes.NewReader(blob))
	assert.ErrorIs(t, err, ErrOldBuildInfo)

	// A magic off the 16-byte grid, or with nonsense after it, is no blob.
	blob = append([]byte("\x7fELF\x00\x00\x00"), buildInfoMagic...)
	blob = append(blob, 8, 2)
	blob = append(blob, bytes.Repeat([]byte{0xff}, 64)...)
	got, err = StreamGoInfo(bytes.NewReader(blob))
	assert.NoError(t, err)
	assert.Nil(t, got)
}

// StreamGoInfo never panics and never reads a blob debug/buildinfo would
// not find (the seeds: ELF headers followed by blobs cut anywhere).
func FuzzStreamGoInfo(f *testing.F) {
	blob := append([]byte("\x7fELF"), bytes.Repeat([]byte{0}, 12)...)
	blob = append(blob, buildInfoMagic...)
	blob = append(blob, 8, 2)
	blob = append(blob, bytes.Repeat([]byte{0}, 16)...)
	blob = append(blob, 8, 'g', 'o', '1', '.', '2', '6', '.', '8', 0)
	f.Add(blob)
	f.Add(blob[:40])
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bi, err := StreamGoInfo(iotest.HalfReader(bytes.NewReader(data)))
		if err == nil && bi != nil && !bytes.Contains(data, buildInfoMagic) {
			t.Fatalf("build info from contents without the magic: %v", bi)
		}
	})
}
