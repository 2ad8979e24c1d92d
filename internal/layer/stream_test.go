package layer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// streamEntries is one file big enough for many blocks and many writes to
// the blob file: 3 MiB of random bytes (incompressible).
func streamEntries(t *testing.T) []rootfs.Entry {
	src := filepath.Join(t.TempDir(), "helper")
	data := make([]byte, 3<<20+12345)
	_, _ = rand.Read(data)
	require.NoError(t, os.WriteFile(src, data, 0o755))
	return []rootfs.Entry{{Path: "/usr/bin/helper", Kind: rootfs.File, Source: src, Mode: 0o755}}
}

// following starts one reader of each Stream Write hands out and returns
// its result once the reader ends.
type following struct {
	stream  *Stream
	started chan struct{} // closed when Follow ran
	ended   chan struct{} // closed when the reader returned
	read    []byte
	err     error
}

func newFollowing() *following {
	return &following{started: make(chan struct{}), ended: make(chan struct{})}
}

func (f *following) follow(s *Stream) {
	f.stream = s
	close(f.started)
	rc, err := s.Layer().Compressed()
	if err != nil {
		f.err = err
		close(f.ended)
		return
	}
	go func() {
		defer close(f.ended)
		defer rc.Close()
		var buf bytes.Buffer
		p := make([]byte, 64<<10)
		for {
			n, err := rc.Read(p)
			buf.Write(p[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				f.err = err
				break
			}
		}
		f.read = buf.Bytes()
	}()
}

// A reader that follows a layer from before its first byte gets exactly
// the blob (that it waits for Allow at the end: TestStreamReaderWaitsAtEnd).
func TestStreamFollowsWrite(t *testing.T) {
	fw := newFollowing()
	var once sync.Once
	l, err := Write(context.Background(), streamEntries(t), Options{Dir: t.TempDir(), Epoch: testEpoch, Threads: 2,
		Follow: func(s *Stream) {
			once.Do(func() {
				// Nothing is known before the first byte.
				_, err := s.Layer().Digest()
				assert.ErrorIs(t, err, stream.ErrNotComputed)
				_, err = s.Layer().Size()
				assert.ErrorIs(t, err, stream.ErrNotComputed)
			})
			fw.follow(s)
		}})
	require.NoError(t, err)
	<-fw.started
	defer fw.stream.Close()
	size, _ := l.Size()

	// Write has returned: the layer is known.
	d, err := fw.stream.Layer().Digest()
	require.NoError(t, err)
	want, _ := l.Digest()
	assert.Equal(t, want, d)
	fw.stream.Allow()
	<-fw.ended
	require.NoError(t, fw.err)
	assert.Equal(t, size, int64(len(fw.read)))
	assert.Equal(t, want.Hex, fmt.Sprintf("%x", sha256.Sum256(fw.read)))
}

func TestStreamEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries func(t *testing.T) []rootfs.Entry
		end     func(s *Stream) // what the owner does after Write
		wantErr string
	}{
		{"Fail", streamEntries, func(s *Stream) { s.Fail(errors.New("platform check failed")) }, "platform check failed"},
		{"Close", streamEntries, func(s *Stream) { s.Close() }, "layer stream closed"},
		{"Write fails", func(t *testing.T) []rootfs.Entry {
			e := streamEntries(t)
			return append(e, rootfs.Entry{Path: "/usr/bin/gone", Kind: rootfs.File, Source: filepath.Join(t.TempDir(), "gone"), Mode: 0o755})
		}, func(s *Stream) { s.Allow() }, "gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw := newFollowing()
			_, werr := Write(context.Background(), tc.entries(t), Options{Dir: t.TempDir(), Epoch: testEpoch, Follow: fw.follow})
			<-fw.started
			defer fw.stream.Close()
			if werr == nil {
				_, err := fw.stream.Layer().Digest()
				require.NoError(t, err)
			} else {
				_, err := fw.stream.Layer().Digest()
				require.Error(t, err, "a failed Write leaves the layer unknown")
			}
			tc.end(fw.stream)
			<-fw.ended
			require.Error(t, fw.err)
			assert.Contains(t, fw.err.Error(), tc.wantErr)
		})
	}
}

// A reader that has read the whole blob waits for the owner instead of
// seeing its end: Allow ends it with io.EOF, its own Close (what an HTTP
// transport does with a request body it abandons) with an error.
func TestStreamReaderWaitsAtEnd(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			var s *Stream
			_, err := Write(context.Background(), streamEntries(t), Options{Dir: t.TempDir(), Epoch: testEpoch, Follow: func(st *Stream) { s = st }})
			require.NoError(t, err)
			defer s.Close()
			size := mustSize(t, s)
			atEnd := make(chan struct{})
			s.mu.Lock()
			s.waiting = func(off int64) {
				if off == size {
					close(atEnd)
				}
			}
			s.mu.Unlock()
			rc, err := s.Layer().Compressed()
			require.NoError(t, err)
			type result struct {
				n   int
				err error
			}
			ended := make(chan result, 1)
			go func() {
				b, err := io.ReadAll(rc)
				ended <- result{len(b), err}
			}()
			select {
			case <-atEnd: // waiting, with s.mu released only by cond.Wait
			case r := <-ended:
				t.Fatalf("the reader ended before its owner decided: %d bytes, %v", r.n, r.err)
			}
			if allow {
				s.Allow()
			} else {
				require.NoError(t, rc.Close())
			}
			r := <-ended
			assert.Equal(t, int(size), r.n)
			if allow {
				assert.NoError(t, r.err)
			} else {
				assert.ErrorIs(t, r.err, errStreamClosed)
			}
		})
	}
}

func mustSize(t *testing.T, s *Stream) int64 {
	n, err := s.Layer().Size()
	require.NoError(t, err)
	return n
}

// go-containerregistry uploads the followed layer as a stream and commits
// it under its digest once allowed; a failed stream commits nothing.
func TestStreamUploadCommitsOnlyWhenAllowed(t *testing.T) {
	repo, err := name.NewRepository(testkit.Registry(t)+"/stream/test", name.Insecure)
	require.NoError(t, err)

	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			upload := make(chan error, 1)
			var s *Stream
			l, err := Write(context.Background(), streamEntries(t), Options{Dir: t.TempDir(), Epoch: testEpoch, Threads: 2,
				Follow: func(st *Stream) {
					s = st
					go func() { upload <- remote.WriteLayer(repo, st.Layer()) }()
				}})
			require.NoError(t, err)
			defer s.Close()
			d, _ := l.Digest()
			if allow {
				s.Allow()
				require.NoError(t, <-upload)
			} else {
				s.Fail(errors.New("platform check failed"))
				require.Error(t, <-upload)
			}
			got, err := remote.Layer(repo.Digest(d.String()))
			require.NoError(t, err)
			_, err = got.Size() // a HEAD on the blob
			if allow {
				require.NoError(t, err)
				rc, err := got.Compressed()
				require.NoError(t, err)
				defer rc.Close()
				h := sha256.New()
				_, err = io.Copy(h, rc)
				require.NoError(t, err)
				assert.Equal(t, d, v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))})
			} else {
				assert.Error(t, err, "the failed stream's blob must not exist")
			}
		})
	}
}
