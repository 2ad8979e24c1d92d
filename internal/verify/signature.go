package verify

import (
	"context"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// signatureCheck runs Options.Signature on the manifest d: one check,
// passed or failed with its reason; none without Options.Signature.
func signatureCheck(ctx context.Context, d v1.Hash, opts Options) ([]Check, error) {
	if opts.Signature == nil {
		return nil, nil
	}
	ok, reason, err := opts.Signature(ctx, d)
	if err != nil {
		return nil, err
	}
	return []Check{{Name: CheckSignature, OK: ok, Reason: reason}}, nil
}
