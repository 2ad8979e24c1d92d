package layer

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// copyBufferSize is the size of the one buffer a Write streams file contents
// through; it bounds the memory a layer needs regardless of file sizes.
const copyBufferSize = 128 << 10

// tarWriter writes planned entries as a deterministic tar stream.
type tarWriter struct {
	tw      *tar.Writer
	epoch   time.Time
	windows bool // add the Windows PAX records (see windowsRecords)
	buf     []byte
}

func newTarWriter(w io.Writer, epoch time.Time, windows bool) *tarWriter {
	return &tarWriter{tw: tar.NewWriter(w), epoch: epoch, windows: windows, buf: make([]byte, copyBufferSize)}
}

// writeAll writes every entry, checking ctx before each one and while
// copying file contents, then closes the tar stream (not w).
func (t *tarWriter) writeAll(ctx context.Context, entries []rootfs.Entry) error {
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := t.writeEntry(ctx, e); err != nil {
			return err
		}
	}
	if err := t.tw.Close(); err != nil {
		return fmt.Errorf("closing tar stream: %w", err)
	}
	return nil
}

func (t *tarWriter) writeEntry(ctx context.Context, e rootfs.Entry) error {
	hdr := t.header(e)
	if e.Kind != rootfs.File {
		if err := t.tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar header for %s: %w", e.Path, err)
		}
		return nil
	}
	f, err := os.Open(e.Source)
	if err != nil {
		return fmt.Errorf("layer entry %s: %w", e.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("layer entry %s: %w", e.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("layer entry %s: source %s is not a regular file (%v)", e.Path, e.Source, fi.Mode().Type())
	}
	hdr.Size = fi.Size()
	if err := t.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("tar header for %s: %w", e.Path, err)
	}
	n, err := copyN(ctx, t.tw, f, hdr.Size, t.buf)
	if err != nil {
		return fmt.Errorf("layer entry %s from %s: %w", e.Path, e.Source, err)
	}
	if n != hdr.Size {
		return fmt.Errorf("layer entry %s: %s shrank from %d to %d bytes while being read", e.Path, e.Source, hdr.Size, n)
	}
	if m, _ := f.Read(t.buf[:1]); m != 0 {
		return fmt.Errorf("layer entry %s: %s grew beyond %d bytes while being read", e.Path, e.Source, hdr.Size)
	}
	return nil
}

// header builds the tar header of e by hand: no user or group names, no
// access or change time, mtime = epoch, type bits only in Typeflag. Format
// is fixed to PAX, which Go writes as plain USTAR for every header that fits
// and adds a PAX record only for what does not (long names, large ids).
func (t *tarWriter) header(e rootfs.Entry) *tar.Header {
	hdr := &tar.Header{
		Name:    strings.TrimPrefix(e.Path, "/"),
		Mode:    rootfs.UnixMode(e.Mode),
		Uid:     e.UID,
		Gid:     e.GID,
		ModTime: t.epoch,
		Format:  tar.FormatPAX,
	}
	switch e.Kind {
	case rootfs.File:
		hdr.Typeflag = tar.TypeReg
	case rootfs.Dir:
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
	case rootfs.Symlink:
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname = e.Linkname
	}
	if t.windows {
		hdr.PAXRecords = windowsRecords(e.Kind)
	}
	return hdr
}

// copyN copies up to size bytes from src to dst through buf, checking ctx
// before every read. It returns fewer than size bytes only if src ended early.
func copyN(ctx context.Context, dst io.Writer, src io.Reader, size int64, buf []byte) (int64, error) {
	var n int64
	for n < size {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		chunk := buf
		if rest := size - n; rest < int64(len(chunk)) {
			chunk = chunk[:rest]
		}
		m, err := src.Read(chunk)
		if m > 0 {
			if _, werr := dst.Write(chunk[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
