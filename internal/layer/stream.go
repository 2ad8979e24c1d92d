package layer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/stream"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Stream lets readers follow a layer's compressed bytes while Write is
// still writing them, so an upload can run beside the compression instead
// of after it. Write hands it to Options.Follow once the blob file exists.
//
// A reader never reaches the end of the blob on its own: after the last
// byte it waits until the owner calls Allow (the layer may be published:
// the reader returns io.EOF) or Fail (it returns the error), so an upload
// that commits at end of stream commits only what its owner let through.
// The owner must call one of them on every path, and Close once no reader
// is left. Until Write has finished, the layer's Digest, DiffID and Size
// fail with an error wrapping go-containerregistry's stream.ErrNotComputed,
// which makes its uploader stream the blob; after that they answer.
type Stream struct {
	mu   sync.Mutex
	cond *sync.Cond
	f    *os.File // the blob file, read with ReadAt; nil once closed

	written int64 // bytes of the blob on disk so far
	done    bool  // Write finished: digest, diffID and size are set
	allowed bool
	err     error // Write failed, or Fail, or Close

	digest, diffID v1.Hash
	size           int64

	// waiting, when set (by tests), is called with s.mu held just before a
	// reader at offset off waits.
	waiting func(off int64)
}

var errStreamClosed = errors.New("layer stream closed")

func newStream(path string) (*Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("layer stream: %w", err)
	}
	s := &Stream{f: f}
	s.cond = sync.NewCond(&s.mu)
	return s, nil
}

// Layer is the layer being written, as go-containerregistry's uploader
// wants a layer whose digest is not known yet. Each Compressed call
// returns a new reader from the first byte.
func (s *Stream) Layer() v1.Layer { return streamLayer{s} }

// Allow lets readers reach the end of the blob once it is complete.
func (s *Stream) Allow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.allowed = true
	}
	s.cond.Broadcast()
}

// Fail ends every reader, now or when it next reads, with err, unless the
// stream already failed.
func (s *Stream) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.cond.Broadcast()
}

// Close releases the blob file; a reader still open fails.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = errStreamClosed
	}
	s.cond.Broadcast()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// grew records that the blob file now holds n more bytes.
func (s *Stream) grew(n int) {
	s.mu.Lock()
	s.written += int64(n)
	s.mu.Unlock()
	s.cond.Broadcast()
}

// finish records Write's result: l on success, else err.
func (s *Stream) finish(l *fileLayer, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		if s.err == nil {
			s.err = err
		}
	case s.written != l.size:
		if s.err == nil {
			s.err = fmt.Errorf("layer %s: %d of %d bytes reached the file", l.digest, s.written, l.size)
		}
	default:
		s.done, s.digest, s.diffID, s.size = true, l.digest, l.diffID, l.size
	}
	s.cond.Broadcast()
}

// known returns what only a finished Write knows.
func (s *Stream) known() (digest, diffID v1.Hash, size int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		return v1.Hash{}, v1.Hash{}, 0, fmt.Errorf("layer still being written: %w", stream.ErrNotComputed)
	}
	return s.digest, s.diffID, s.size, nil
}

// readAt waits until the blob has bytes at off, or its end may be read,
// and reads them.
func (s *Stream) readAt(p []byte, off int64, closed *bool) (int, error) {
	s.mu.Lock()
	for s.err == nil && !*closed && off >= s.written && !(s.done && s.allowed) {
		if s.waiting != nil {
			s.waiting(off)
		}
		s.cond.Wait()
	}
	switch {
	case *closed:
		s.mu.Unlock()
		return 0, errStreamClosed
	case s.err != nil:
		err := s.err
		s.mu.Unlock()
		return 0, err
	case off >= s.written: // done and allowed
		s.mu.Unlock()
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.written-off))
	f := s.f
	s.mu.Unlock()
	// The bytes below written are final: Write only appends.
	return f.ReadAt(p[:n], off)
}

// streamLayer is the v1.Layer face of a Stream.
type streamLayer struct{ s *Stream }

func (l streamLayer) Digest() (v1.Hash, error) {
	d, _, _, err := l.s.known()
	return d, err
}

func (l streamLayer) DiffID() (v1.Hash, error) {
	_, d, _, err := l.s.known()
	return d, err
}

func (l streamLayer) Size() (int64, error) {
	_, _, n, err := l.s.known()
	return n, err
}

func (l streamLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

func (l streamLayer) Compressed() (io.ReadCloser, error) { return &streamReader{s: l.s}, nil }

// Uncompressed is not offered: the stream is for uploading the blob; the
// finished layer Write returns reads its tar.
func (l streamLayer) Uncompressed() (io.ReadCloser, error) {
	return nil, errors.New("layer stream: only the compressed blob can be read")
}

// streamReader reads a Stream from the first byte.
type streamReader struct {
	s      *Stream
	off    int64
	closed bool // guarded by s.mu
}

func (r *streamReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.s.readAt(p, r.off, &r.closed)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil // ReadAt's EOF at the current end of file; more may follow
	}
	return n, err
}

// Close wakes a Read waiting on another goroutine (an HTTP transport
// closes a request body it gives up on) and fails later reads.
func (r *streamReader) Close() error {
	r.s.mu.Lock()
	r.closed = true
	r.s.mu.Unlock()
	r.s.cond.Broadcast()
	return nil
}
