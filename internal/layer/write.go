package layer

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Options configures Write.
type Options struct {
	// Dir is the existing directory the blob is written into, as a file named
	// by the hex of its digest (see BlobPath). A temporary file in Dir is
	// renamed into place only once the layer is complete.
	Dir string
	// Epoch is the modification time of every entry, truncated to whole
	// seconds. The zero time means the Unix epoch; times before 1970 are an
	// error.
	Epoch time.Time
	// Level is the gzip level, 1 (fastest) to 9 (smallest); 0 means
	// DefaultLevel.
	Level int
	// Threads is how many goroutines may compress at once; 0 means 1. The
	// blob does not depend on it (see blockGzip).
	Threads int
	// Follow, when set, is called once the blob file exists and before its
	// first byte, with a Stream that readers can follow while Write goes on
	// (an upload beside the compression). The callee owns it: see Stream.
	// Cache.Write calls it only when it writes a layer, not on a hit.
	Follow func(*Stream)
	// Hashed, when set, is called by Cache.Write with the SHA-256 and
	// size of each regular file's contents as it hashes them for the
	// cache key (hit or miss), so a caller that needs a file's digest
	// (the SBOM's binaries) reads the file no second time.
	Hashed func(source string, sha256 v1.Hash, size int64)
	// Windows writes the layer in the format Windows' containerd and
	// Docker import: every entry under Files/ (an entry /app/x.exe is
	// C:\app\x.exe), an empty Hives/ directory, and on every header the
	// PAX records MSWINDOWS.rawsd (owner and group BUILTIN\Users, which
	// makes a binary executable there) and MSWINDOWS.fileattr. Symlinks
	// are refused. The layer stays deterministic.
	Windows bool
}

// outputBufferSize batches the compressor's small writes into few syscalls.
const outputBufferSize = 256 << 10

// Write builds one deterministic tar+gzip layer from entries and writes it to
// a file in opts.Dir, computing digest, DiffID and size in the same single
// streaming pass. Entries need not be sorted: paths are cleaned, missing
// parent directories are added (0755, 0:0) and entries are written sorted by
// path, parents first. A relative path, a ".." element, the root itself, a
// duplicate path or a parent that is not a directory is an error naming the
// path. ctx is checked between entries and while copying file contents; on
// any error, including cancellation, no file is left in opts.Dir.
func Write(ctx context.Context, entries []rootfs.Entry, opts Options) (v1.Layer, error) {
	epoch, level, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	planned, err := plan(entries)
	if err == nil && opts.Windows {
		planned, err = windowsPlan(planned)
	}
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(opts.Dir, ".layer-*.partial")
	if err != nil {
		return nil, fmt.Errorf("layer in %s: %w", opts.Dir, err)
	}
	var s *Stream
	var blob io.Writer = tmp
	if opts.Follow != nil {
		if s, err = newStream(tmp.Name()); err != nil {
			return nil, errors.Join(err, tmp.Close(), removeIfExists(tmp.Name()))
		}
		blob = &growWriter{w: tmp, s: s}
		opts.Follow(s)
	}
	// No fsync: it cost 30 ms a layer on the critical path, and a blob a
	// crash leaves short or zeroed is caught where it matters, when the
	// cache hands it out again (Cache.lookup checks its digest unless its
	// stamp says it is the same file in the same boot).
	l, err := writeBlob(ctx, blob, tmp.Name(), planned, epoch, level, opts.Threads, opts.Windows)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("layer file %s: %w", tmp.Name(), cerr)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		l.path = BlobPath(opts.Dir, l.digest)
		l.source = &tarSource{entries: planned, epoch: epoch, windows: opts.Windows}
		err = os.Rename(tmp.Name(), l.path)
	}
	if s != nil {
		s.finish(l, err)
	}
	if err != nil {
		return nil, errors.Join(err, removeIfExists(tmp.Name()))
	}
	return l, nil
}

// growWriter tells a Stream about every write that reached the file.
type growWriter struct {
	w io.Writer
	s *Stream
}

func (g *growWriter) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	g.s.grew(n)
	return n, err
}

func checkOptions(opts Options) (time.Time, int, error) {
	fi, err := os.Stat(opts.Dir)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("layer directory: %w", err)
	}
	if !fi.IsDir() {
		return time.Time{}, 0, fmt.Errorf("layer directory %s is not a directory", opts.Dir)
	}
	level := opts.Level
	if level == 0 {
		level = DefaultLevel
	}
	if level < 1 || level > 9 {
		return time.Time{}, 0, fmt.Errorf("gzip level %d: want 1 to 9, or 0 for the default %d", opts.Level, DefaultLevel)
	}
	epoch := time.Unix(0, 0).UTC()
	if !opts.Epoch.IsZero() {
		if opts.Epoch.Before(epoch) {
			return time.Time{}, 0, fmt.Errorf("epoch %s is before 1970", opts.Epoch.UTC().Format(time.RFC3339))
		}
		epoch = time.Unix(opts.Epoch.Unix(), 0).UTC()
	}
	return epoch, level, nil
}

// writeBlob streams tar -> sha256 (DiffID) -> gzip -> sha256 + count
// (digest, size) -> buffered file, and returns the layer without a path.
func writeBlob(ctx context.Context, f io.Writer, name string, entries []rootfs.Entry, epoch time.Time, level, threads int, windows bool) (*fileLayer, error) {
	out := bufio.NewWriterSize(f, outputBufferSize)
	compressed := &hashWriter{w: out, h: sha256.New()}
	gz, err := newBlockGzip(compressed, level, threads)
	if err != nil {
		return nil, err
	}
	uncompressed := &hashWriter{w: gz, h: sha256.New()}
	if err := newTarWriter(uncompressed, epoch, windows).writeAll(ctx, entries); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("layer file %s: gzip: %w", name, err)
	}
	if err := out.Flush(); err != nil {
		return nil, fmt.Errorf("layer file %s: %w", name, err)
	}
	return &fileLayer{
		digest: compressed.sum(),
		diffID: uncompressed.sum(),
		size:   compressed.n,
	}, nil
}

// hashWriter hashes and counts everything it passes on to w.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

func (hw *hashWriter) sum() v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(hw.h.Sum(nil))}
}

func removeIfExists(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
