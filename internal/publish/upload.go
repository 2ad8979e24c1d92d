package publish

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/registry"
)

// Uploader sends an image's blobs (layers and config) and its manifest by
// digest ahead of the release, while other platforms still compile. Blobs
// are content-addressed and a manifest by digest is pullable only by that
// digest, so this moves no tag; ToRegistry, given the same Session, then
// finds them in place and neither sends nor checks them again.
type Uploader struct {
	reg *registry.Session
	log *slog.Logger

	mu sync.Mutex
	// streamed are the layers Layer sent, by REPOSITORY@DIGEST.
	streamed map[string]bool
}

// maxBlobUploads bounds the blobs of one image in flight at once.
const maxBlobUploads = 4

// NewUploader makes an Uploader that sends blobs with reg, logging on log
// (nil: nowhere).
func NewUploader(reg *registry.Session, log *slog.Logger) *Uploader {
	return &Uploader{reg: reg, log: logger(log), streamed: map[string]bool{}}
}

// Image uploads img's layers and config blob to repo, then its manifest
// by digest (see place); blobs the registry has are skipped and base
// layers are mounted where possible. It first
// asks whether repo holds img's manifest already (a release pushed again):
// a registry keeps the blobs of a manifest it holds, so then no blob is
// asked for, and the release finds the manifest in place (Session.Found).
// It does not ask for an image with a layer Layer has just streamed: that
// is new work, and the question would only delay the release's last
// platforms.
func (u *Uploader) Image(ctx context.Context, r name.Repository, img v1.Image) error {
	start := time.Now()
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fresh, err := u.hasStreamed(r, img)
	if err != nil {
		return err
	}
	if !fresh {
		in, err := u.reg.Has(ctx, r.Digest(d.String()))
		if err != nil {
			return fmt.Errorf("check %s@%s: %w", r, d, registry.Explain(err))
		}
		if in {
			u.log.Info("image in place", "repository", r.String(), "image", d.String(), "duration", time.Since(start).Round(time.Millisecond))
			return nil
		}
	}
	if err := uploadBlobs(ctx, u.reg, r, img); err != nil {
		return err
	}
	placed, err := u.place(ctx, r.Digest(d.String()), img)
	if err != nil {
		return err
	}
	u.log.Info("blobs uploaded", "repository", r.String(), "image", d.String(), "manifest", placed, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// place puts img's manifest as ref, its blobs being in place, and asks for
// it back (Session.Has), so that the release, which would do both after the
// last platform, finds it checked. A manifest naming a subject is left to
// the release, which puts it only once its subject is in place. When the
// registry does not answer with the manifest yet, the release puts and
// checks it again; place reports whether it was found.
func (u *Uploader) place(ctx context.Context, ref name.Digest, img v1.Image) (bool, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return false, err
	}
	if hasSubject(raw) {
		return false, nil
	}
	if err := u.reg.Put(ctx, ref, img); err != nil {
		return false, fmt.Errorf("push %s: %w", ref, registry.Explain(err))
	}
	in, err := u.reg.Has(ctx, ref)
	if err != nil {
		return false, fmt.Errorf("check %s: %w", ref, registry.Explain(err))
	}
	return in, nil
}

// uploadBlobs uploads img's layers and config blob to r with reg; a
// foreign (non-distributable) layer is not uploaded: the manifest
// references it by its URLs.
func uploadBlobs(ctx context.Context, reg *registry.Session, r name.Repository, img v1.Image) error {
	layers, err := distributable(img)
	if err != nil {
		return err
	}
	cfg, err := partial.ConfigLayer(img)
	if err != nil {
		return err
	}
	// Each blob costs a round trip or more even when the registry has it
	// (HEAD, mount): they go out together, as go-containerregistry's own
	// image push does.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxBlobUploads)
	for _, l := range append(layers, cfg) {
		g.Go(func() error {
			if err := reg.Upload(gctx, r, l); err != nil {
				d, _ := l.Digest()
				return fmt.Errorf("upload %s@%s: %w", r, d, registry.Explain(err))
			}
			return nil
		})
	}
	return g.Wait()
}

// Layer uploads l to repo. l may still be being written (see layer.Stream):
// go-containerregistry then streams it (no existence check: its digest is
// not known yet) and commits it under the digest it has once the stream
// ends. A later Image of the same repository finds it uploaded.
func (u *Uploader) Layer(ctx context.Context, r name.Repository, l v1.Layer) error {
	start := time.Now()
	if err := u.reg.Upload(ctx, r, l); err != nil {
		return fmt.Errorf("upload a layer to %s: %w", r, registry.Explain(err))
	}
	d, err := l.Digest()
	if err == nil {
		u.mu.Lock()
		u.streamed[r.Digest(d.String()).String()] = true
		u.mu.Unlock()
	}
	u.log.Info("layer uploaded while written", "repository", r.String(), "digest", d.String(), "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// hasStreamed reports whether Layer sent one of img's layers to r.
func (u *Uploader) hasStreamed(r name.Repository, img v1.Image) (bool, error) {
	layers, err := img.Layers()
	if err != nil {
		return false, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return false, err
		}
		if u.streamed[r.Digest(d.String()).String()] {
			return true, nil
		}
	}
	return false, nil
}
