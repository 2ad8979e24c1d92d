package build

import (
	"context"
	"errors"
	"sync"

	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// A run gathers the failures of the per-platform checks (verifyPlatform:
// config, architecture, contract, start-up run) of every image and
// platform, and fails once every unit was checked, so one run names all of
// them (issue 25). Every other failure stops the run at once: a compile
// error, a layer or attestation that cannot be written, a registry that
// fails an upload, an interrupt (the context's cancellation). Base
// platforms are gathered before anything compiles (see fetchBases).

// errHeldBack is a unit that passed its checks after another one failed:
// its blobs are not uploaded, since the run cannot publish anyway.
var errHeldBack = errors.New("passed its checks, not uploaded: another platform failed its checks")

// checkFindings are the units that failed their checks, in unit order.
type checkFindings struct {
	mu       sync.Mutex
	reports  [][]*verify.PlatformReport // [image][platform], nil where a unit passed
	gathered [][]bool                   // [image][platform]: failed or held back, gathered
}

func newCheckFindings(units [][]unit) *checkFindings {
	f := &checkFindings{reports: make([][]*verify.PlatformReport, len(units)), gathered: make([][]bool, len(units))}
	for i := range units {
		f.reports[i] = make([]*verify.PlatformReport, len(units[i]))
		f.gathered[i] = make([]bool, len(units[i]))
	}
	return f
}

// gather records err, unit (i, j)'s failure, and reports whether it is one
// the run gathers (a failed check, or a unit held back because of one)
// rather than one that stops the run.
func (f *checkFindings) gather(ctx context.Context, i, j int, err error) bool {
	if ctx.Err() != nil {
		return false // interrupted: the unit's failure may be the interrupt's
	}
	var fe *verify.FailedError
	switch {
	case errors.Is(err, errHeldBack):
		f.mu.Lock()
		f.gathered[i][j] = true
		f.mu.Unlock()
		return true
	case errors.As(err, &fe) && len(fe.Report.Platforms) == 1:
		f.mu.Lock()
		f.reports[i][j], f.gathered[i][j] = &fe.Report.Platforms[0], true
		f.mu.Unlock()
		return true
	}
	return false
}

// ended reports whether unit (i, j) failed its checks or was held back:
// it is finished, not to be assembled again.
func (f *checkFindings) ended(i, j int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gathered[i][j]
}

// failed reports whether some unit failed its checks.
func (f *checkFindings) failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.reports {
		for _, r := range f.reports[i] {
			if r != nil {
				return true
			}
		}
	}
	return false
}

// err is one *verify.FailedError per image with a failed platform, each
// holding the reports of all its failed platforms in platform order,
// joined; nil when every unit passed.
func (f *checkFindings) err(plan *recipe.Plan) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []error
	for i := range f.reports {
		rep := &verify.Report{Digest: "-"} // no index was built
		for _, r := range f.reports[i] {
			if r != nil {
				rep.Platforms = append(rep.Platforms, *r)
			}
		}
		if len(rep.Platforms) > 0 {
			out = append(out, failed(plan.Images[i].Name, rep))
		}
	}
	if len(out) == 0 {
		return nil
	}
	out = append(out, errors.New(checksWayOut))
	return errors.Join(out...)
}

// checksWayOut is the last line of a run whose checks failed.
const checksWayOut = "fix each image's Dockerfile for the failures listed above (the contract's rules: docs/gitlab-image-contract.md) and run again"

// withFindings is err, after the gathered failures when there are any.
func (f *checkFindings) withFindings(plan *recipe.Plan, err error) error {
	if ferr := f.err(plan); ferr != nil {
		return errors.Join(ferr, err)
	}
	return err
}
