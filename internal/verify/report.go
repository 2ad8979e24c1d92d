package verify

import (
	"fmt"
	"slices"
	"strings"
)

// Check names, in the order the table prints them.
const (
	CheckCoverage = "coverage"
	CheckConfig   = "config"
	CheckArch     = "arch"
	CheckContract = "contract"
	CheckRun      = "run"
	// CheckStart is the start-up run of Options.Run with a contract: the
	// image started as the Helm chart (runner) or the executors (helper)
	// start it (docs/startup-run.md).
	CheckStart = "start"
	// CheckAttest is Options.Attestations: each image's SBOM and provenance.
	CheckAttest = "attestations"
	// CheckSignature is Options.Signature: each manifest is signed by the
	// expected signer (the table's SIGNED column).
	CheckSignature = "signed"
	// CheckNodes is the check of Options.Nodes: a node without an image.
	CheckNodes = "nodes"
)

var checkOrder = []string{CheckCoverage, CheckConfig, CheckArch, CheckContract, CheckRun, CheckStart, CheckAttest, CheckSignature}

// Severities of a Finding.
const (
	SeverityFail    = "fail"
	SeverityWarning = "warning"
)

// Report is the result of verifying one image reference.
type Report struct {
	// Digest is the digest of the index (or of the single image) verified.
	Digest string `json:"digest"`
	// Problems are the failures that belong to no image of the index:
	// expected platforms missing from it, entries that are not image
	// manifests or name no platform, a single image where an index was
	// expected, nodes without an image. A problem of a listed entry (not
	// expected, listed twice, arm without a variant) is that entry's
	// coverage check instead, so every finding is reported once.
	Problems []Finding `json:"problems"`
	// Platforms holds one report per image in the index, in index order.
	Platforms []PlatformReport `json:"platforms"`
	// Nodes is what the nodes check covered; nil without Options.Nodes.
	Nodes *NodeCount `json:"nodes,omitempty"`
}

// PlatformReport holds the checks of one platform's image.
type PlatformReport struct {
	Platform string  `json:"platform"` // as the index descriptor lists it, os/arch[/variant]
	Digest   string  `json:"digest"`   // the image manifest's digest
	Checks   []Check `json:"checks"`
}

// Check is one finding. A check category that found nothing wrong appears
// once with OK set and a summary in Reason; every problem it found appears as
// its own Check with OK false and a one-line Reason, and Path when it is
// about one file. Warnings are findings worth reading (a Go binary built
// with cgo) that do not fail the check.
type Check struct {
	Name    string `json:"check"`
	OK      bool   `json:"ok"`
	Path    string `json:"path,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Warning bool   `json:"warning,omitempty"`
	StepResult
}

// StepResult is what a failed step of a start-up run (CheckStart) left:
// its name, the user it ran as, how it ended and the last lines it printed.
type StepResult struct {
	Step string `json:"step,omitempty"`
	User string `json:"user,omitempty"` // "uid 100", "root"
	// Status is the exit status when the step exited with one other than
	// 0, -1 when it was killed, timed out or could not be executed.
	Status int    `json:"status,omitempty"`
	Output string `json:"output,omitempty"` // the last lines, at most outputTail bytes
}

// Finding is a failure or a warning, as Findings lists them.
type Finding struct {
	// Platform is the image's platform (os/arch[/variant]); for a problem,
	// the platform it is about, if any; for a node, the node's platform.
	Platform string `json:"platform"`
	Check    string `json:"check"`
	// Path is the file the finding is about, if any.
	Path string `json:"path"`
	// Node is the cluster node of a CheckNodes finding.
	Node     string `json:"node,omitempty"`
	Reason   string `json:"reason"`
	Severity string `json:"severity"` // SeverityFail or SeverityWarning
	StepResult
}

// OK reports whether the report has no problem and no failed check.
func (r *Report) OK() bool {
	for _, p := range r.Problems {
		if p.Severity != SeverityWarning {
			return false
		}
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

// Findings lists every failure and warning once, as objects: each
// platform's in index order, then the problems.
func (r *Report) Findings() []Finding {
	var out []Finding
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			switch {
			case !c.OK:
				out = append(out, Finding{Platform: p.Platform, Check: c.Name, Path: c.Path, Reason: c.Reason, Severity: SeverityFail, StepResult: c.StepResult})
			case c.Warning:
				out = append(out, Finding{Platform: p.Platform, Check: c.Name, Path: c.Path, Reason: c.Reason, Severity: SeverityWarning, StepResult: c.StepResult})
			}
		}
	}
	return append(out, r.Problems...)
}

// problem is an index-level failure of check about platform p ("" for none).
func problem(check, p, reason string) Finding {
	return Finding{Platform: p, Check: check, Reason: reason, Severity: SeverityFail}
}

// findings collects the checks of one category.
type findings struct {
	name   string
	checks []Check
	failed bool
}

func (f *findings) fail(reason string) { f.failAt("", reason) }

// failAt records a failure about the file at path.
func (f *findings) failAt(path, reason string) {
	f.failed = true
	f.checks = append(f.checks, Check{Name: f.name, Path: path, Reason: reason})
}

func (f *findings) warn(reason string) { f.warnAt("", reason) }

// warnAt records a warning about the file at path.
func (f *findings) warnAt(path, reason string) {
	f.checks = append(f.checks, Check{Name: f.name, OK: true, Path: path, Reason: reason, Warning: true})
}

// done returns the collected checks, with one passing check carrying summary
// when nothing failed.
func (f *findings) done(summary string) []Check {
	if f.failed {
		return f.checks
	}
	return append([]Check{{Name: f.name, OK: true, Reason: summary}}, f.checks...)
}

// FailedError is a verification that found failures. Its message is one
// line that counts them; Report holds them all, for WriteTable.
type FailedError struct {
	Name   string // what was verified: a reference, "image NAME"
	Report *Report
	// Outcome, if set, says what the failure stopped ("nothing was published").
	Outcome string
}

func (e *FailedError) Error() string {
	n, onIndex := 0, false
	var checks, platforms []string
	for _, f := range e.Report.Findings() {
		if f.Severity == SeverityWarning {
			continue
		}
		n++
		if !slices.Contains(checks, f.Check) {
			checks = append(checks, f.Check)
		}
		if f.Platform != "" && f.Node == "" && !slices.Contains(platforms, f.Platform) {
			platforms = append(platforms, f.Platform)
		}
		onIndex = onIndex || (f.Platform == "" && f.Node == "")
	}
	noun := "failures"
	if n == 1 {
		noun = "failure"
	}
	msg := e.Name + " failed verification"
	if e.Outcome != "" {
		msg += ", " + e.Outcome
	}
	msg += fmt.Sprintf(": %d %s %s", n, strings.Join(checks, "/"), noun)
	var on []string
	if len(platforms) > 0 {
		on = append(on, strings.Join(platforms, ","))
	}
	if onIndex {
		on = append(on, "the index")
	}
	if len(on) > 0 {
		msg += " on " + strings.Join(on, " and ")
	}
	return msg
}
