package registry

import (
	"context"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Read resolves ref once and returns what it points at, pinned by digest:
// a registry reference is read here (one GET of its manifest, o's
// transport, keychain and insecure hosts), any other is imageref.Read's.
// Its layers read through o.Blobs when that is set; when o.Blobs is kept
// between runs, so are an index's manifests and configs (see keptIndex).
func Read(ctx context.Context, ref imageref.Ref, o imageref.Options) (*imageref.Artifact, error) {
	if ref.Transport != imageref.Registry {
		return imageref.Read(ctx, ref, o)
	}
	opts := RemoteOptions(ctx, o)
	if o.Blobs.Kept() {
		// One puller for the index and the blobs read from it: one ping.
		puller, err := remote.NewPuller(opts...)
		if err != nil {
			return nil, err
		}
		opts = append(opts, remote.Reuse(puller))
	}
	desc, err := remote.Get(ref.Name, opts...)
	if err != nil {
		return nil, describeReadError(ref.Name.String(), err)
	}
	if o.Blobs.Kept() && desc.MediaType.IsIndex() {
		return readKept(ref, desc, o, opts)
	}
	return imageref.FromRegistry(ref, desc, o.Blobs)
}

// describeReadError names what was read and the way out (a 404 is
// imageref.ErrNotFound).
func describeReadError(what string, err error) error { return DescribeRead(what, err) }
