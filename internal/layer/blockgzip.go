package layer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
)

// blockSize is how much uncompressed input each deflate block of a layer
// covers. It is part of the layer format: changing it changes every
// compressed digest (not the DiffIDs).
const blockSize = 1 << 20

// dictSize is deflate's window: a block may refer back this far into the
// block before it.
const dictSize = 32 << 10

// blockGzip writes one gzip member whose deflate stream is cut into blocks
// of blockSize input bytes, pigz's layout: each block is compressed on its
// own with the last 32 KiB of the block before as dictionary and ends with
// a sync flush (byte-aligned, not final); the last block ends the stream.
// Blocks can thus be compressed on several cores at once while the caller
// goes on writing, and the output depends on input and level only, never
// on the number of threads or how the input was split into writes. Any
// gzip reader reads it. With one thread everything runs in the caller's
// goroutine (and so at its thread's priority). Memory is bounded by the
// threads: each block in flight holds its input and its output.
type blockGzip struct {
	w       io.Writer
	level   int
	threads int

	cur     *gzBlock   // the block being filled
	tail    []byte     // a copy of the last dictSize bytes of the block before cur
	queue   []*gzBlock // blocks being compressed, in stream order
	free    []*gzBlock // emitted blocks, whose buffers are reused
	writers chan *flate.Writer
	crc     uint32
	size    uint32 // input length mod 2^32, as gzip's trailer wants
	started bool
	err     error
}

// gzBlock is one block on its way through a compressing goroutine. Its
// buffers are its own until it is emitted.
type gzBlock struct {
	in    []byte
	dict  []byte // the block before's last dictSize bytes
	final bool
	out   *bytes.Buffer
	err   error
	done  chan struct{}
}

var errClosed = errors.New("gzip writer is closed")

func newBlockGzip(w io.Writer, level, threads int) (*blockGzip, error) {
	if level < flate.BestSpeed || level > flate.BestCompression {
		return nil, fmt.Errorf("gzip level %d: want 1 to 9", level)
	}
	threads = max(threads, 1)
	return &blockGzip{w: w, level: level, threads: threads, writers: make(chan *flate.Writer, threads)}, nil
}

func (z *blockGzip) Write(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p)
	z.size += uint32(len(p))
	n := len(p)
	for len(p) > 0 {
		if z.cur == nil {
			z.cur = z.block()
		}
		take := min(blockSize-len(z.cur.in), len(p))
		z.cur.in = append(z.cur.in, p[:take]...)
		p = p[take:]
		if len(z.cur.in) == blockSize {
			if z.err = z.submit(false); z.err != nil {
				return 0, z.err
			}
		}
	}
	return n, nil
}

// Close compresses what is left as the final block, waits for every block
// and writes the trailer. It does not close the underlying writer.
func (z *blockGzip) Close() error {
	if z.err != nil {
		return z.err
	}
	if z.cur == nil {
		z.cur = z.block()
	}
	if z.err = z.submit(true); z.err != nil {
		return z.err
	}
	for len(z.queue) > 0 {
		if z.err = z.emit(); z.err != nil {
			return z.err
		}
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[0:], z.crc)
	binary.LittleEndian.PutUint32(trailer[4:], z.size)
	if _, z.err = z.w.Write(trailer[:]); z.err != nil {
		return z.err
	}
	z.err = errClosed
	return nil
}

// submit hands cur to a compressing goroutine (or compresses it here with
// one thread), first emitting the oldest block while all threads are busy.
func (z *blockGzip) submit(final bool) error {
	if !z.started {
		z.started = true
		if err := z.header(); err != nil {
			return err
		}
	}
	b := z.cur
	z.cur = nil
	b.dict = append(b.dict[:0], z.tail...)
	b.final = final
	if !final {
		// A copy: b's buffers are reused once it is emitted, which with one
		// thread is before the next block is submitted.
		z.tail = append(z.tail[:0], b.in[len(b.in)-dictSize:]...)
	}
	if z.threads == 1 {
		z.compress(b)
		z.queue = append(z.queue, b)
		return z.emit()
	}
	for len(z.queue) >= z.threads {
		if err := z.emit(); err != nil {
			return err
		}
	}
	z.queue = append(z.queue, b)
	go z.compress(b)
	return nil
}

// header writes gzip's header: no name, no comment, no time, OS 255.
func (z *blockGzip) header() error {
	xfl := byte(0)
	switch z.level {
	case flate.BestSpeed:
		xfl = 4
	case flate.BestCompression:
		xfl = 2
	}
	_, err := z.w.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255})
	return err
}

func (z *blockGzip) compress(b *gzBlock) {
	defer close(b.done)
	var fw *flate.Writer
	select {
	case fw = <-z.writers:
		fw.ResetDict(b.out, b.dict)
	default:
		if fw, b.err = flate.NewWriterDict(b.out, z.level, b.dict); b.err != nil {
			return
		}
	}
	defer func() { z.writers <- fw }()
	if _, b.err = fw.Write(b.in); b.err != nil {
		return
	}
	if b.final {
		b.err = fw.Close()
	} else {
		b.err = fw.Flush()
	}
}

// emit waits for the oldest block and writes it.
func (z *blockGzip) emit() error {
	b := z.queue[0]
	z.queue = z.queue[1:]
	<-b.done
	if b.err != nil {
		return b.err
	}
	if _, err := z.w.Write(b.out.Bytes()); err != nil {
		return err
	}
	z.free = append(z.free, b)
	return nil
}

// block returns an empty block, reusing an emitted one's buffers.
func (z *blockGzip) block() *gzBlock {
	var b *gzBlock
	if n := len(z.free); n > 0 {
		b = z.free[n-1]
		z.free = z.free[:n-1]
		b.in, b.err = b.in[:0], nil
		b.out.Reset()
	} else {
		// Deflate output is at most a little larger than its input.
		b = &gzBlock{in: make([]byte, 0, blockSize), dict: make([]byte, 0, dictSize),
			out: bytes.NewBuffer(make([]byte, 0, blockSize+blockSize/64))}
	}
	b.done = make(chan struct{})
	return b
}
