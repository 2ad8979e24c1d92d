package release

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// initBaseRetries and initBaseTimeout bound init's read of its base: one
// quick question, not a release (a registry that is down fails in
// seconds, not minutes).
const (
	initBaseRetries = 2
	initBaseTimeout = 30 * time.Second
)

// CheckInitBase is CheckBasePlatforms unless base is scratch (no
// platforms to check) or offline (init --offline) says not to read it.
func CheckInitBase(ctx context.Context, base string, offline bool, want []string, reg Registry) error {
	if base == "scratch" || offline {
		return nil
	}
	return CheckBasePlatforms(ctx, base, want, reg)
}

// CheckBasePlatforms reads base's index (a registry, an oci: layout or an
// oci-archive:) through reg and fails, naming every platform base lacks,
// when it does not offer each of want: the platforms init writes, which a
// build on that base would refuse. A base that cannot be read is an error
// naming it, with init's --offline (no check) as the way out.
func CheckBasePlatforms(ctx context.Context, base string, want []string, reg Registry) error {
	ref, err := imageref.Parse(base, reg.Insecure)
	if err != nil {
		return &InputError{fmt.Errorf("--base %s: %w", base, err)}
	}
	wanted, err := platform.ParseList(strings.Join(want, ","))
	if err != nil {
		return err
	}
	reg.Retries, reg.Timeout = initBaseRetries, initBaseTimeout
	s, err := openSession(reg, "init", "", nil, nil)
	if err != nil {
		return &InputError{err}
	}
	defer s.Close()
	a, err := registry.Read(ctx, ref, s.images)
	if err != nil {
		return fmt.Errorf("--base: %w (init reads the base to check its platforms; give --offline to write the files without that check)", err)
	}
	offered, err := a.Platforms()
	if err != nil {
		return fmt.Errorf("--base %s: %w", base, err)
	}
	var missing []v1.Platform
	for _, p := range wanted {
		if platform.Index(offered, p) < 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &InputError{fmt.Errorf("--base %s has no %s of the platforms init writes (it offers: %s): give a base that has all of %s, or run init --offline with this one and delete %s from platforms: in helperbuild.yaml",
		base, platform.FormatList(missing), platform.FormatList(offered), strings.Join(want, ","), platform.FormatList(missing))}
}
