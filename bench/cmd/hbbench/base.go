package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// pushBase pushes a small multi-platform OCI base image to ref: one image per
// platform, each with one layer from layerOf (tinyLayer: a few files naming
// its platform; busyboxLayer: busybox with an apk database) and a config with PATH, so ko and helperbuild both have something real to put
// their binary on.
func pushBase(ctx context.Context, ref string, platforms []v1.Platform, layerOf func(v1.Platform, time.Time) (v1.Layer, error)) (v1.Hash, error) {
	tag, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, err
	}
	epoch := time.Unix(1700000000, 0).UTC()
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		layer, err := layerOf(p, epoch)
		if err != nil {
			return v1.Hash{}, err
		}
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
		if err != nil {
			return v1.Hash{}, err
		}
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		cf, err := img.ConfigFile()
		if err != nil {
			return v1.Hash{}, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
		cf.Created = v1.Time{Time: epoch}
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return v1.Hash{}, err
		}
		pl := p
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pl}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx)); err != nil {
		return v1.Hash{}, fmt.Errorf("push base %s: %w", ref, err)
	}
	return idx.Digest()
}

// tinyLayer is a deterministic layer with /etc/bench-base-platform and a
// few directories the images expect.
func tinyLayer(p v1.Platform, epoch time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"etc/", "tmp/", "usr/", "usr/bin/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	content := []byte(p.OS + "/" + p.Architecture + "/" + p.Variant + "\n")
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/bench-base-platform", Mode: 0o644, Size: int64(len(content)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
