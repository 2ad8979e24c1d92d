//go:build linux

package build

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// hostBinariesBase is a one-layer base of the host's /usr/bin programs (up
// to mb MB uncompressed, each at most 16 MB) plus the test binary (a Go
// program) and a dpkg status file: ELF executables as a distribution base
// holds them.
func hostBinariesBase(b *testing.B, mb int) v1.Image {
	b.Helper()
	names, err := filepath.Glob("/usr/bin/*")
	require.NoError(b, err)
	sort.Strings(names)
	self, err := os.Executable()
	require.NoError(b, err)
	names = append([]string{self}, names...)
	p := filepath.Join(b.TempDir(), "layer.tar.gz")
	out, err := os.Create(p)
	require.NoError(b, err)
	bw := bufio.NewWriter(out)
	gz, err := gzip.NewWriterLevel(bw, gzip.DefaultCompression)
	require.NoError(b, err)
	tw := tar.NewWriter(gz)
	status := []byte("Package: libc6\nVersion: 2.36-9\nArchitecture: amd64\n\n")
	require.NoError(b, tw.WriteHeader(&tar.Header{Name: "var/lib/dpkg/status", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(status))}))
	_, err = tw.Write(status)
	require.NoError(b, err)
	total := int64(0)
	for i, n := range names {
		st, err := os.Stat(n)
		if err != nil || !st.Mode().IsRegular() || st.Size() > 16<<20 || total+st.Size() > int64(mb)<<20 {
			continue
		}
		f, err := os.Open(n)
		require.NoError(b, err)
		require.NoError(b, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("usr/bin/%d-%s", i, filepath.Base(n)), Typeflag: tar.TypeReg, Mode: int64(st.Mode().Perm()), Size: st.Size()}))
		_, err = io.Copy(tw, f)
		require.NoError(b, err)
		require.NoError(b, f.Close())
		total += st.Size()
	}
	require.NoError(b, tw.Close())
	require.NoError(b, gz.Close())
	require.NoError(b, bw.Flush())
	require.NoError(b, out.Close())
	l, err := tarball.LayerFromFile(p)
	require.NoError(b, err)
	img, err := mutate.AppendLayers(empty.Image, l)
	require.NoError(b, err)
	return img
}

// BenchmarkFlatBase measures what reading a base costs a release with
// attestations: "flatten" is the pass every release makes, "os" also keeps
// the package database (what attestations cost before base Go binaries
// were looked for), "os+go" is flatBases with readOS as the release runs
// it (also reading the Go build info of each ELF executable as it streams),
// "os+go cached" the same in a later run, read from the cache's record
// (flatStore, issue 41).
//
//	go test -run '^$' -bench FlatBase -benchtime 5x ./internal/release/
func BenchmarkFlatBase(b *testing.B) {
	img := hostBinariesBase(b, 120)
	dig, err := img.Digest()
	require.NoError(b, err)
	layers, err := img.Layers()
	require.NoError(b, err)
	store := &flatStore{dir: b.TempDir(), self: "bench"}
	warm := flatBases{readOS: true, store: store}
	require.NoError(b, warm.flat(b.Context(), dig, img).err)
	for _, mode := range []string{"flatten", "os", "os+go", "os+go cached"} {
		b.Run(mode, func(b *testing.B) {
			before := cpuTime(b)
			n, bins := 0, 0
			for b.Loop() {
				n++
				switch mode {
				case "flatten":
					_, err := rootfs.Flatten(b.Context(), layers)
					require.NoError(b, err)
				case "os":
					fs, kept, err := rootfs.FlattenKeeping(b.Context(), layers, attest.OSFile)
					require.NoError(b, err)
					_, err = attest.ReadOSKept(b.Context(), fs, kept, layers)
					require.NoError(b, err)
				case "os+go", "os+go cached":
					fb := flatBases{readOS: true}
					if mode == "os+go cached" {
						fb.store = store
					}
					os, found, _, err := fb.contents(b.Context(), dig, img)
					require.NoError(b, err)
					require.NotEmpty(b, os.Packages)
					bins = len(found)
				}
			}
			if mode != "flatten" && mode != "os" {
				require.NotZero(b, bins, "the test binary at least")
				b.ReportMetric(float64(bins), "go-binaries")
			}
			b.ReportMetric(float64((cpuTime(b)-before).Milliseconds())/float64(n), "cpu-ms/op")
		})
	}
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
