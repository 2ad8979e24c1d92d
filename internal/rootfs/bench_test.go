//go:build unix

package rootfs

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
)

// distroLayer writes a gzip layer shaped like a distribution base: files
// spread over directories, each part random (incompressible) and part
// zeros, so that the layer is about compressedMB on the wire.
func distroLayer(b *testing.B, files, compressedMB int) v1.Layer {
	b.Helper()
	p := filepath.Join(b.TempDir(), "layer.tar.gz")
	out, err := os.Create(p)
	require.NoError(b, err)
	bw := bufio.NewWriter(out)
	gz, err := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	require.NoError(b, err)
	tw := tar.NewWriter(gz)
	rnd := rand.New(rand.NewChaCha8([32]byte{}))
	random := compressedMB << 20 / files
	buf := make([]byte, random*8/3) // about 2.7x uncompressed, like ubuntu:24.04
	for i := range files {
		d := fmt.Sprintf("usr/share/pkg%03d/sub%d", i/40, i%4)
		if i%40 < 4 {
			require.NoError(b, tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755}))
		}
		for j := range random {
			buf[j] = byte(rnd.Uint32())
		}
		require.NoError(b, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("%s/file%d", d, i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(buf))}))
		_, err := tw.Write(buf)
		require.NoError(b, err)
	}
	require.NoError(b, tw.Close())
	require.NoError(b, gz.Close())
	require.NoError(b, bw.Flush())
	require.NoError(b, out.Close())
	l, err := tarball.LayerFromFile(p)
	require.NoError(b, err)
	return l
}

// BenchmarkFlatten measures what flattening a base costs: one gunzip and
// tar pass over the layer, no contents kept. "gunzip" is the floor: the same
// layer decompressed to io.Discard.
//
//	go test -run '^$' -bench Flatten -benchmem -benchtime 5x ./internal/rootfs/
func BenchmarkFlatten(b *testing.B) {
	for _, c := range []struct{ files, mb int }{{3300, 30}, {30000, 30}} {
		l := distroLayer(b, c.files, c.mb)
		for _, mode := range []string{"flatten", "gunzip"} {
			b.Run(fmt.Sprintf("%s-%dMB-%dfiles", mode, c.mb, c.files), func(b *testing.B) {
				before := cpuTime(b)
				n := 0
				for b.Loop() {
					n++
					if mode == "gunzip" {
						rc, err := l.Uncompressed()
						require.NoError(b, err)
						_, err = io.Copy(io.Discard, rc)
						require.NoError(b, err)
						require.NoError(b, rc.Close())
						continue
					}
					f, err := Flatten(context.Background(), []v1.Layer{l})
					require.NoError(b, err)
					if _, ok := f.Lookup("/usr/share/pkg000/sub0/file0"); !ok {
						b.Fatal("file0 missing")
					}
				}
				// CPU time, unlike ns/op, does not grow with the processes
				// waiting for the same cores.
				b.ReportMetric(float64((cpuTime(b)-before).Milliseconds())/float64(n), "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
