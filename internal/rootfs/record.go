package rootfs

import (
	"archive/tar"
	"context"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Header is the part of a tar header Add reads, with where it was met: a
// flattening recorded as Headers and given to Replay builds the same FS
// without the layers' bytes (a cache of flattened bases keeps them).
type Header struct {
	Layer    int    `json:"l"`
	Seq      int    `json:"s"`
	Name     string `json:"n"`
	Type     byte   `json:"t"`
	Mode     int64  `json:"m,omitempty"`
	UID      int    `json:"u,omitempty"`
	GID      int    `json:"g,omitempty"`
	Size     int64  `json:"z,omitempty"`
	Linkname string `json:"k,omitempty"`
}

// FlattenEachRecorded is FlattenEach that also returns every header the
// FS was built from, in order.
func FlattenEachRecorded(ctx context.Context, layers []v1.Layer, fn func(src Source, path string, hdr *tar.Header, r io.Reader) error) (*FS, []Header, error) {
	var hs []Header
	f, err := flattenEach(ctx, layers, fn, &hs)
	if err != nil {
		return nil, nil, err
	}
	return f, hs, nil
}

// Replay builds the FS that the recorded headers hs built.
func Replay(hs []Header) *FS {
	f := New()
	for _, h := range hs {
		f.Add(h.Layer, h.Seq, &tar.Header{Name: h.Name, Typeflag: h.Type, Mode: h.Mode, Uid: h.UID, Gid: h.GID, Size: h.Size, Linkname: h.Linkname})
	}
	return f
}

func record(hs *[]Header, layer, seq int, hdr *tar.Header) {
	*hs = append(*hs, Header{Layer: layer, Seq: seq, Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode,
		UID: hdr.Uid, GID: hdr.Gid, Size: hdr.Size, Linkname: hdr.Linkname})
}
