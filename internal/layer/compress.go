package layer

import (
	"io"

	"github.com/klauspost/compress/gzip"
)

// DefaultLevel is the gzip level used when Options.Level is 0.
//
// Compressor and level were chosen by BenchmarkPlainGzip on
// /usr/local/go/bin/go (15.4 MB Go binary, 128 KiB writes, 2-core AMD EPYC
// shared with other jobs, so absolute numbers are noisy; ratios held over
// two runs): go test -run XXX -bench . -benchmem -benchtime 5x ./internal/layer
//
//	level  compress/gzip          klauspost/compress/gzip
//	1      49-79 MB/s  44.6 %     136-141 MB/s  45.7 %
//	3      45-49 MB/s  42.0 %     102-116 MB/s  43.2 %
//	5      23-33 MB/s  40.3 %      71-76  MB/s  41.3 %
//	6      23-24 MB/s  40.1 %      69-73  MB/s  40.9 %
//	9          7 MB/s  40.0 %       6-7   MB/s  39.9 %
//
// The whole Write (read, tar, two sha256, gzip, file) ran at 63 MB/s at
// level 5 and 105 MB/s at level 1, with ~1.5 MB allocated per layer; tar
// alone ran at 8 GB/s and sha256 at 1.2 GB/s, so gzip is the bottleneck.
//
// Level 1 is the default because a release is CPU-bound: the links of the
// other platforms run on the same cores while layers are compressed, and
// on the five-platform benchmark (scripts/bench.sh, 48 MB binaries, 2
// cores) level 1 took 1.1-1.4 s off the run for 6.6 % larger blobs (111 MB
// against 104 MB, about ko's 110 MB with the standard library's level 1;
// go-containerregistry and ko default to level 1 as well). Users who pay
// more for bytes pulled than for build time pick a higher level
// (helperbuild --compression-level).
//
// Layers are written by blockGzip (klauspost's flate in 1 MiB blocks, each
// with the block before as dictionary), whose output is a pure function of
// input, level and library version whatever the number of threads (checked
// by TestCompressorDeterministic); a different klauspost version in go.mod
// may change the compressed digest but never the DiffID. One thread ran
// at 116 MB/s, two at 196 MB/s on the 15.4 MB go binary (BenchmarkWrite,
// level 1); blobs are the size a single deflate stream gives (bigmain's
// five layers 111.1 MB either way).
const DefaultLevel = 1

// newGzipReader returns a reader of the gzip stream in r.
func newGzipReader(r io.Reader) (*gzip.Reader, error) {
	return gzip.NewReader(r)
}
