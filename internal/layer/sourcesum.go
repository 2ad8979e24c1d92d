package layer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// sumRecord is what a file in Dir/sums holds: the SHA-256 and size of a
// Go binary whose build ID and size name the file.
type sumRecord struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// sourceSum returns the SHA-256 and length of the layer source at path.
//
// A Go binary is read once: its SHA-256 is recorded under its build ID
// and size, and a later run finds it there without reading the file, as
// the go command itself takes a file whose build ID it expects for up to
// date without reading it (it only touches it, so the file's times say
// nothing). The record is written only when the hashed bytes hold the same
// build ID note at the same place as was read first, so a file that
// changed while it was hashed records nothing. A binary without a build ID
// the go command wrote (-ldflags=-buildid=, a -buildid of the user's own,
// not ELF, not Go) is hashed every time, like every other file.
func (c *Cache) sourceSum(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	bid, isGo := readGoBuildID(f)
	var recFile string
	if isGo {
		recFile = c.sumFile(bid.id, fi.Size())
		if sum, ok := readSumRecord(recFile, fi.Size()); ok {
			return sum, fi.Size(), nil
		}
	}
	h := sha256.New()
	seen := &noteWindow{off: bid.off, want: bid.note}
	n, err := io.Copy(io.MultiWriter(h, seen), io.NewSectionReader(f, 0, fi.Size()+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	sum := h.Sum(nil)
	if isGo && n == fi.Size() && seen.matched() {
		c.writeSumRecord(recFile, sum, n) // best effort: without it, the next run hashes again
	}
	return sum, n, nil
}

// sumFile is the record of the Go binary with build ID id and size.
func (c *Cache) sumFile(id string, size int64) string {
	k := sha256.Sum256([]byte("helperbuild-gobuildid-v1\x00" + id + "\x00" + strconv.FormatInt(size, 10)))
	return filepath.Join(c.Dir, "sums", hex.EncodeToString(k[:])+".json")
}

func readSumRecord(file string, size int64) ([]byte, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var r sumRecord
	if json.Unmarshal(data, &r) != nil || r.Size != size {
		return nil, false
	}
	sum, err := hex.DecodeString(r.SHA256)
	if err != nil || len(sum) != sha256.Size {
		return nil, false
	}
	now := time.Now() // used now: Prune keeps it
	_ = os.Chtimes(file, now, now)
	return sum, true
}

func (c *Cache) writeSumRecord(file string, sum []byte, n int64) {
	data, err := json.Marshal(sumRecord{SHA256: hex.EncodeToString(sum), Size: n})
	if err != nil || os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	_ = writeAtomic(file, data)
}

// noteWindow watches a byte stream for want at offset off and reports
// whether the stream held exactly it there.
type noteWindow struct {
	off  int64
	want []byte
	pos  int64
	got  int // bytes of want compared and equal so far
	bad  bool
}

func (w *noteWindow) Write(p []byte) (int, error) {
	start, end := w.pos, w.pos+int64(len(p))
	w.pos = end
	lo, hi := max(start, w.off), min(end, w.off+int64(len(w.want)))
	if lo < hi {
		if string(p[lo-start:hi-start]) != string(w.want[lo-w.off:hi-w.off]) {
			w.bad = true
		}
		w.got += int(hi - lo)
	}
	return len(p), nil
}

func (w *noteWindow) matched() bool { return len(w.want) > 0 && !w.bad && w.got == len(w.want) }
