package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/outfile"
)

// File modes of everything helperbuild writes, before the umask: what an
// ordinary `cp` or `tar x` would give, nothing executable.
const (
	dirMode = 0o755
)

// layoutDir writes an OCI image layout by hand instead of through
// go-containerregistry's layout package, which writes index.json and
// oci-layout executable (0777 before the umask), streams some blobs 0600,
// and adds an artifactType (the config media type) to the entry of every
// plain image, which older clients drop, changing the digest of an index
// they copy. Here directories are 0755, every file 0644, and an entry is
// media type, digest, size and annotations.
type layoutDir struct {
	dir     string
	index   v1.IndexManifest // index.json as it will be written
	pending []blob           // blobs to write, each digest once
	queued  map[v1.Hash]bool
}

// blob is one file of blobs/ and how to read it.
type blob struct {
	digest v1.Hash
	size   int64 // -1: unknown
	open   func() (io.ReadCloser, error)
}

// openLayout reads the layout at dir, or starts an empty one (created on
// commit).
func openLayout(dir string) (*layoutDir, error) {
	l := &layoutDir{dir: dir, queued: map[v1.Hash]bool{},
		index: v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{}}}
	data, err := os.ReadFile(filepath.Join(dir, specsv1.ImageIndexFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return l, nil
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(data, &l.index); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if l.index.Manifests == nil {
		l.index.Manifests = []v1.Descriptor{}
	}
	return l, nil
}

// addIndex queues every blob of idx: its manifest, its children (indexes
// recursively), their configs and layers.
func (l *layoutDir) addIndex(idx v1.ImageIndex) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return err
			}
			if err := l.addIndex(child); err != nil {
				return err
			}
		case d.MediaType.IsImage():
			img, err := idx.Image(d.Digest)
			if err != nil {
				return err
			}
			if err := l.addImage(img); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %s: %s is neither an image nor an index", d.Digest, d.MediaType)
		}
	}
	return l.addRaw(idx)
}

func (l *layoutDir) addImage(img v1.Image) error {
	layers, err := distributable(img)
	if err != nil {
		return err
	}
	for _, layer := range layers {
		d, err := layer.Digest()
		if err != nil {
			return err
		}
		size, err := layer.Size()
		if err != nil {
			return err
		}
		l.queue(blob{digest: d, size: size, open: layer.Compressed})
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cd, err := img.ConfigName()
	if err != nil {
		return err
	}
	l.queue(bytesBlob(cd, cfg))
	return l.addRaw(img)
}

// addRaw queues the manifest of m.
func (l *layoutDir) addRaw(m interface {
	partial.WithRawManifest
	Digest() (v1.Hash, error)
}) error {
	raw, err := m.RawManifest()
	if err != nil {
		return err
	}
	d, err := m.Digest()
	if err != nil {
		return err
	}
	l.queue(bytesBlob(d, raw))
	return nil
}

func (l *layoutDir) queue(b blob) {
	if !l.queued[b.digest] {
		l.queued[b.digest] = true
		l.pending = append(l.pending, b)
	}
}

// maxBlobWrites bounds the blobs written at once.
const maxBlobWrites = 4

// writeBlobs writes every queued blob the layout does not hold yet.
func (l *layoutDir) writeBlobs(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxBlobWrites)
	for _, b := range l.pending {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return l.writeBlob(b)
		})
	}
	return g.Wait()
}

// writeBlob writes b to blobs/ALG/HEX through a temporary file renamed
// into place, unless a file of its size is already there.
func (l *layoutDir) writeBlob(b blob) error {
	dir := filepath.Join(l.dir, specsv1.ImageBlobsDir, b.digest.Algorithm)
	path := filepath.Join(dir, b.digest.Hex)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && (b.size < 0 || fi.Size() == b.size) {
		return nil
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	rc, err := b.open()
	if err != nil {
		return fmt.Errorf("blob %s: %w", b.digest, err)
	}
	defer rc.Close()
	return outfile.Write(path, func(w io.Writer) error {
		n, err := io.Copy(w, rc)
		if err != nil {
			return fmt.Errorf("blob %s: %w", b.digest, err)
		}
		if b.size >= 0 && n != b.size {
			return fmt.Errorf("blob %s: %d bytes, want %d", b.digest, n, b.size)
		}
		return nil
	})
}

// setEntry names desc ref in index.json: an entry of that name is removed
// and desc appended (as go-containerregistry's Replace* do).
func (l *layoutDir) setEntry(ref string, desc v1.Descriptor) {
	kept := l.index.Manifests[:0]
	for _, d := range l.index.Manifests {
		if d.Annotations[specsv1.AnnotationRefName] != ref {
			kept = append(kept, d)
		}
	}
	desc.Annotations = map[string]string{specsv1.AnnotationRefName: ref}
	l.index.Manifests = append(kept, desc)
}

// commit writes oci-layout (when missing) and index.json.
func (l *layoutDir) commit() error {
	if err := os.MkdirAll(l.dir, dirMode); err != nil {
		return fmt.Errorf("output %s: %w", l.dir, err)
	}
	marker := filepath.Join(l.dir, specsv1.ImageLayoutFile)
	if _, err := os.Stat(marker); errors.Is(err, os.ErrNotExist) {
		version, err := json.Marshal(specsv1.ImageLayout{Version: specsv1.ImageLayoutVersion})
		if err != nil {
			return err
		}
		if err := outfile.WriteBytes(marker, version); err != nil {
			return fmt.Errorf("layout %s: %w", l.dir, err)
		}
	}
	if err := outfile.WriteJSON(filepath.Join(l.dir, specsv1.ImageIndexFile), l.index); err != nil {
		return fmt.Errorf("layout %s: %w", l.dir, err)
	}
	return nil
}

// bytesBlob is a blob held in memory (a manifest or a config).
func bytesBlob(d v1.Hash, data []byte) blob {
	return blob{digest: d, size: int64(len(data)), open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}
