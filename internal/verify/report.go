package verify

// Check names, in the order the table prints them.
const (
	CheckCoverage = "coverage"
	CheckConfig   = "config"
	CheckArch     = "arch"
	CheckContract = "contract"
	CheckRun      = "run"
)

var checkOrder = []string{CheckCoverage, CheckConfig, CheckArch, CheckContract, CheckRun}

// Report is the result of verifying one image reference.
type Report struct {
	// Digest is the digest of the index (or of the single image) verified.
	Digest string `json:"digest"`
	// Problems are index-level failures: missing, extra or duplicated
	// platforms, entries that are not image manifests, a single image where
	// an index was expected, nodes without an image.
	Problems []string `json:"problems"`
	// Platforms holds one report per image in the index, in index order.
	Platforms []PlatformReport `json:"platforms"`
}

// PlatformReport holds the checks of one platform's image.
type PlatformReport struct {
	Platform string  `json:"platform"` // as the index descriptor lists it, os/arch[/variant]
	Digest   string  `json:"digest"`   // the image manifest's digest
	Checks   []Check `json:"checks"`
}

// Check is one finding. A check category that found nothing wrong appears
// once with OK set and a summary in Reason; every problem it found appears as
// its own Check with OK false and a one-line Reason. Warnings are findings
// worth reading (a Go binary built with cgo) that do not fail the check.
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"`
	Warning bool   `json:"warning,omitempty"`
}

// OK reports whether the report has no problem and no failed check.
func (r *Report) OK() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, p := range r.Platforms {
		if !p.OK() {
			return false
		}
	}
	return true
}

// OK reports whether every check of the platform passed.
func (p *PlatformReport) OK() bool {
	for _, c := range p.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// findings collects the checks of one category.
type findings struct {
	name   string
	checks []Check
	failed bool
}

func (f *findings) fail(reason string) {
	f.failed = true
	f.checks = append(f.checks, Check{Name: f.name, Reason: reason})
}

func (f *findings) warn(reason string) {
	f.checks = append(f.checks, Check{Name: f.name, OK: true, Reason: reason, Warning: true})
}

// done returns the collected checks, with one passing check carrying summary
// when nothing failed.
func (f *findings) done(summary string) []Check {
	if f.failed {
		return f.checks
	}
	return append([]Check{{Name: f.name, OK: true, Reason: summary}}, f.checks...)
}
