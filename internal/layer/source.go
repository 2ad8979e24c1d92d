package layer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// tarSource is what a layer was written from: its planned entries and
// epoch. The tar stream is a pure function of them and the files' contents,
// so it can be produced again without decompressing the blob.
type tarSource struct {
	entries []rootfs.Entry // planned: sorted, parents added
	epoch   time.Time
	windows bool // Windows layer format (see Options.Windows)
}

// open streams the tar again from its sources. The stream is checked
// against diffID before its last bytes are handed out: if a source file
// changed since the layer was written, the reader fails instead of
// describing a layer that is not the blob. Closing the reader early stops
// the writer.
func (s *tarSource) open(diffID v1.Hash) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		hold := &holdLast{w: pw}
		hw := &hashWriter{w: hold, h: sha256.New()}
		err := newTarWriter(hw, s.epoch, s.windows).writeAll(context.Background(), s.entries)
		if err == nil && hw.sum() != diffID {
			err = fmt.Errorf("layer %s: its source files changed after it was written (the tar stream now hashes to %s)", diffID, hw.sum())
		}
		if err == nil {
			err = hold.flush()
		}
		pw.CloseWithError(err) // nil: the reader sees io.EOF
	}()
	return pr
}

// holdLast passes writes on one behind: the latest write is kept until the
// next one or flush, so a reader cannot reach the end of the stream before
// the writer has decided whether it is good.
type holdLast struct {
	w    io.Writer
	buf  []byte
	held int
}

func (h *holdLast) Write(p []byte) (int, error) {
	if err := h.flush(); err != nil {
		return 0, err
	}
	h.buf = append(h.buf[:0], p...)
	h.held = len(p)
	return len(p), nil
}

func (h *holdLast) flush() error {
	if h.held == 0 {
		return nil
	}
	n := h.held
	h.held = 0
	_, err := h.w.Write(h.buf[:n])
	return err
}
