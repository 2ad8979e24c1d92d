package release

import (
	"context"
	"errors"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/gitmeta"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/sandbox"
	"github.com/helperbuild/helperbuild/internal/sign"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// VerifyTarget is an image verify was asked to check, its reference
// parsed.
type VerifyTarget struct {
	arg string
	ref imageref.Ref
	// sig checks each manifest's signature (verify --signature); nil: none.
	sig *sign.Verifier
}

// ParseVerifyTarget reads verify's argument: a registry reference,
// oci:DIR[:TAG] or oci-archive:FILE[:TAG]; insecure are the hosts that
// may be reached over plain HTTP.
func ParseVerifyTarget(arg string, insecure []string) (*VerifyTarget, error) {
	ref, err := imageref.Parse(arg, insecure)
	if err != nil {
		return nil, &InputError{err}
	}
	if ref.Transport == imageref.Scratch {
		return nil, inputf("there is nothing to verify in scratch")
	}
	return &VerifyTarget{arg: arg, ref: ref}, nil
}

// Verify reads the target through reg (each blob once) and checks it with
// opts (TempDir set here); metadata, if not "", gets the report as JSON
// whether the checks pass or not. A failed check is in the report, not an
// error.
func (t *VerifyTarget) Verify(ctx context.Context, opts verify.Options, reg Registry, metadata string, obs Observer) (*verify.Report, error) {
	obs = obs.defaults()
	if err := checkOutputFile("--metadata-file", metadata); err != nil {
		return nil, err
	}
	// Checks read some layers more than once, and platforms share layers:
	// the session's blob store fetches each blob once, and a reader only
	// ever opens a complete one.
	s, err := openSession(reg, "verify", "", obs.Logger, obs.RetryLogger)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	opts.TempDir = s.tmp
	if opts.Run {
		// Nothing is downloaded where nothing could run.
		if err := (&sandbox.Runner{}).Probe(ctx, s.tmp); err != nil {
			return nil, fmt.Errorf("verify --run: %w", err)
		}
	}
	imgOpts := s.images
	a, err := registry.Read(ctx, t.ref, imgOpts)
	if err != nil {
		return nil, err
	}
	if t.sig != nil {
		opts.Signature = t.signatureCheck(imgOpts)
	}
	if opts.Attestations && t.ref.Transport == imageref.Registry {
		opts.Referrers = registry.Referrers(t.ref.Name.Context(), imgOpts)
	}
	if wd, err := os.Getwd(); err == nil && opts.Attestations && gitmeta.Read(ctx, wd, gitmeta.Toplevel).Toplevel != "" {
		// The provenance's recipe is looked up in this checkout.
		opts.SourceFile = func(ctx context.Context, commit, path string) ([]byte, error) {
			data, err := gitmeta.ShowFile(ctx, wd, commit, path)
			if errors.Is(err, gitmeta.ErrNoCommit) {
				return nil, fmt.Errorf("%w: %v", verify.ErrNoCommit, err)
			}
			return data, err
		}
	}
	var rep *verify.Report
	if a.Index != nil {
		rep, err = verify.Index(ctx, a.Index, opts)
	} else {
		rep, err = verify.Image(ctx, a.Image, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", t.arg, err)
	}
	if metadata != "" {
		if err := outfile.WriteJSON(metadata, verify.DocumentOf(t.arg, rep)); err != nil {
			return nil, fmt.Errorf("metadata file: %w", err)
		}
	}
	return rep, nil
}

// Check says what is wrong with r's retry settings, naming their flags.
func (r Registry) Check() error {
	if err := r.retries().Check(); err != nil {
		return &InputError{err}
	}
	return nil
}

// CheckSignatures makes Verify check that the index and every platform
// manifest carry a valid signature (bundle or legacy referrer, or .sig
// tag) under r, whose files it reads; the target must be in a registry.
func (t *VerifyTarget) CheckSignatures(r SignatureRequest) error {
	if t.ref.Transport != imageref.Registry {
		return inputf("--signature checks the signatures a registry holds; %s is not a registry reference", t.arg)
	}
	p, err := r.policy()
	if err != nil {
		return err
	}
	v, err := sign.NewVerifier(p)
	if err != nil {
		return inputf("--signature: %v", err)
	}
	t.sig = v
	return nil
}

// signatureCheck is verify's signature check of manifests in the target's
// repository, read with o.
func (t *VerifyTarget) signatureCheck(o imageref.Options) func(ctx context.Context, d v1.Hash) (bool, string, error) {
	repo := t.ref.Name.Context()
	return func(ctx context.Context, d v1.Hash) (bool, string, error) {
		found, err := t.sig.VerifyDigest(ctx, repo, d, registry.Reader{Options: o})
		if err != nil {
			return false, "", err
		}
		if found.Valid == "" {
			return false, found.Reason, nil
		}
		return true, found.Valid + " signature verified", nil
	}
}
