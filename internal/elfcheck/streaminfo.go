package elfcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime/debug"
	"strings"
)

// Bounds of StreamGoInfo: the build info's version string and module
// information it accepts, and the window it searches with.
const (
	maxInfoVersion = 1 << 10
	maxModInfo     = 1 << 20
	streamWindow   = 2*maxModInfo + 64<<10
)

// ErrOldBuildInfo says a Go binary keeps its build info in the format of Go
// before 1.18 (pointers into the data segment), which a stream cannot
// follow: spool the file and use debug/buildinfo.
var ErrOldBuildInfo = errors.New("Go build info in the pre-Go 1.18 format")

// buildInfoMagic starts a Go binary's build info blob (debug/buildinfo's).
var buildInfoMagic = []byte("\xff Go buildinf:")

// StreamGoInfo reads the build info of the ELF file streamed by r without
// holding or spooling the file: it searches the stream for the build info
// blob (the 16-byte aligned magic, a 32-byte header and, since Go 1.18, the
// Go version and module information inline as varint-prefixed strings) and
// parses the module information with debug.ParseBuildInfo, as
// debug/buildinfo does from a file. It returns nil and no error for
// contents that are not ELF or hold no build info; ErrOldBuildInfo when
// the only blob found is in the pre-1.18 format. The stream is read to its
// end. Memory is bounded by streamWindow; a blob whose strings exceed
// maxInfoVersion or maxModInfo is not taken for one.
func StreamGoInfo(r io.Reader) (*debug.BuildInfo, error) {
	var s InfoStreamer
	return s.Read(r)
}

// InfoStreamer is StreamGoInfo keeping its window between calls, for a
// caller that reads many files one after the other. The zero value is
// ready; not safe for concurrent use.
type InfoStreamer struct{ buf []byte }

// Read is StreamGoInfo.
func (s *InfoStreamer) Read(r io.Reader) (*debug.BuildInfo, error) {
	if s.buf == nil {
		s.buf = make([]byte, streamWindow)
	}
	buf := s.buf
	have, err := io.ReadFull(r, buf)
	eof := err != nil
	if eof && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	if !IsELF(buf[:have]) {
		_, err := io.Copy(io.Discard, r)
		return nil, err
	}
	// buf[0] is always at a stream offset that is a multiple of 16.
	next, old := 0, false
	for {
		keep := have - len(buildInfoMagic) + 1 // where an unfinished search resumes
		for {
			j := alignedIndex(buf[:have], next)
			if j < 0 {
				next = max(next, keep)
				break
			}
			next = j + 16
			bi, more, isOld := parseBlob(buf[j:have])
			switch {
			case bi != nil:
				_, err := io.Copy(io.Discard, r)
				return bi, err
			case more && !eof && j > 0:
				keep, next = j, j // read on with the blob at the start
			case isOld:
				old = true
				continue
			default:
				continue
			}
			break
		}
		if eof {
			if old {
				return nil, ErrOldBuildInfo
			}
			return nil, nil
		}
		keep = max(0, min(keep, have, next)) &^ 15
		copy(buf, buf[keep:have])
		have, next = have-keep, max(0, next-keep)
		n, err := io.ReadFull(r, buf[have:])
		have += n
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, err
			}
			eof = true
		}
	}
}

// alignedIndex is the first index from from on, a multiple of 16 (b[0] is
// at a stream offset that is one), at which b holds the build info magic;
// -1 if none. Looking only where debug/buildinfo would (the blob is 16-byte
// aligned) is what makes the search cheap: machine code is full of 0xff.
func alignedIndex(b []byte, from int) int {
	from = (from + 15) &^ 15
	for i := from; i+len(buildInfoMagic) <= len(b); i += 16 {
		if b[i] == 0xff && b[i+1] == ' ' && bytes.Equal(b[i:i+len(buildInfoMagic)], buildInfoMagic) {
			return i
		}
	}
	return -1
}

// parseBlob reads a build info blob at the start of b: the build info, or
// more when b ends before the blob does, or old for a blob in the pre-1.18
// format. Anything else (a magic that starts no blob) gives all zero.
func parseBlob(b []byte) (bi *debug.BuildInfo, more, old bool) {
	const headerSize, flagsOffset, flagsVersionInl = 32, 15, 0x2
	if len(b) < headerSize {
		return nil, true, false
	}
	if b[flagsOffset]&flagsVersionInl == 0 {
		return nil, false, true
	}
	vers, rest, more := varintString(b[headerSize:], maxInfoVersion)
	if more || vers == nil {
		return nil, more, false
	}
	mod, _, more := varintString(rest, maxModInfo)
	if more || mod == nil || !strings.HasPrefix(string(vers), "go") {
		return nil, more, false
	}
	// The module information is framed by 16-byte sentinels, as
	// debug/buildinfo strips them; without them there is none.
	m := string(mod)
	if len(m) >= 33 && m[len(m)-17] == '\n' {
		m = m[16 : len(m)-16]
	} else if len(m) != 0 {
		return nil, false, false
	}
	info, err := debug.ParseBuildInfo(m)
	if err != nil {
		return nil, false, false
	}
	info.GoVersion = string(vers)
	return info, false, false
}

// varintString reads a uvarint length and that many bytes: the string (not
// nil, maybe empty) and what follows, or more when b ends first. A length
// over limit gives a nil string.
func varintString(b []byte, limit int) (s, rest []byte, more bool) {
	n, k := binary.Uvarint(b)
	switch {
	case k == 0:
		return nil, nil, true
	case k < 0 || n > uint64(limit):
		return nil, nil, false
	case uint64(len(b)-k) < n:
		return nil, nil, true
	}
	return b[k : k+int(n) : k+int(n)], b[k+int(n):], false
}
