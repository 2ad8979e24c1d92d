package build

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// flatStore keeps what flattening a base gave (its filesystem as the
// headers that built it, and with attestations its OS, package database
// and Go binaries) in the layer cache, under <cache>/flat, keyed by the
// base's manifest digest and this executable's build ID: a re-run on the
// same base reads a small file instead of every base layer again (issue
// 41). layer.Cache.Prune removes records no run has read for its age. A
// record is only an optimisation: one that is missing, unreadable
// or not this executable's is ignored and written again. nil keeps
// nothing.
type flatStore struct {
	dir  string
	self string // the executable's Go build ID
}

// flatRecordFormat is the version of flatRecord.
const flatRecordFormat = 1

type flatRecord struct {
	Key     string          `json:"key"`
	Headers []rootfs.Header `json:"headers"`
	OS      attest.OS       `json:"os"`
	Bins    []flatBinary    `json:"bins,omitempty"`
	Skipped []string        `json:"skipped,omitempty"`
}

// flatBinary is a base's Go binary: its path and build info (as
// debug.BuildInfo.String writes it; debug.ParseBuildInfo leaves the Go
// version out, so it is kept beside).
type flatBinary struct {
	Path      string `json:"path"`
	GoVersion string `json:"goVersion"`
	BuildInfo string `json:"buildInfo"`
}

// newFlatStore is the store in cache's directory; nil without a cache or
// when the executable has no Go build ID to key records with.
func newFlatStore(cache *layer.Cache) *flatStore {
	if cache == nil || cache.Dir == "" {
		return nil
	}
	self := layer.SelfID()
	if self == "" {
		return nil
	}
	return &flatStore{dir: filepath.Join(cache.Dir, "flat"), self: self}
}

func (s *flatStore) key(dig v1.Hash, readOS bool) string {
	return fmt.Sprintf("helperbuild %s; format %d; readOS %t; base %s", s.self, flatRecordFormat, readOS, dig)
}

func (s *flatStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+".json")
}

// load fills fb from the record of base dig; false when there is none
// usable.
func (s *flatStore) load(dig v1.Hash, readOS bool, fb *flatBase) bool {
	if s == nil {
		return false
	}
	key := s.key(dig, readOS)
	data, err := os.ReadFile(s.path(key))
	if err != nil {
		return false
	}
	var rec flatRecord
	if json.Unmarshal(data, &rec) != nil || rec.Key != key {
		return false
	}
	bins, ok := parseFlatBinaries(rec.Bins)
	if !ok {
		return false
	}
	fb.fs, fb.os, fb.bins, fb.skipped = rootfs.Replay(rec.Headers), rec.OS, bins, rec.Skipped
	now := time.Now() // used: layer.Cache.Prune keeps it
	_ = os.Chtimes(s.path(key), now, now)
	return true
}

// save records fb, flattened from the headers hs, for base dig. A record
// that would not read back the same is not written.
func (s *flatStore) save(dig v1.Hash, readOS bool, hs []rootfs.Header, fb *flatBase) {
	if s == nil || fb.err != nil {
		return
	}
	rec := flatRecord{Key: s.key(dig, readOS), Headers: hs, OS: fb.os, Skipped: fb.skipped}
	for _, b := range fb.bins {
		if b.Info == nil || b.SHA256 != (v1.Hash{}) {
			return // not a base binary as BaseScan gives them
		}
		rec.Bins = append(rec.Bins, flatBinary{Path: b.Path, GoVersion: b.Info.GoVersion, BuildInfo: b.Info.String()})
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	var back flatRecord
	if json.Unmarshal(data, &back) != nil || !reflect.DeepEqual(back.OS, fb.os) || !sameSlice(back.Skipped, fb.skipped) {
		return
	}
	if bins, ok := parseFlatBinaries(back.Bins); !ok || !sameSlice(bins, fb.bins) {
		return
	}
	_ = writeFileAtomic(s.dir, s.path(rec.Key), data)
}

// sameSlice is reflect.DeepEqual but for a nil and an empty slice, which
// JSON does not tell apart and no reader of a flatBase does either.
func sameSlice[T any](a, b []T) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

func parseFlatBinaries(fbs []flatBinary) ([]attest.Binary, bool) {
	var out []attest.Binary
	for _, b := range fbs {
		info, err := debug.ParseBuildInfo(b.BuildInfo)
		if err != nil {
			return nil, false
		}
		info.GoVersion = b.GoVersion
		out = append(out, attest.Binary{Path: b.Path, Info: info})
	}
	return out, true
}

// writeFileAtomic writes data to path (in dir) through a temporary file
// and a rename, so a reader never sees half a record.
func writeFileAtomic(dir, path string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		if werr = os.Rename(f.Name(), path); werr == nil {
			return nil
		}
	}
	_ = os.Remove(f.Name())
	if werr != nil {
		return werr
	}
	return cerr
}
