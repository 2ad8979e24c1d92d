package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/helperbuild/helperbuild/internal/progress"
)

// Write prints r as verify does, in format ("json": WriteReportJSON, else the
// table), and returns a *FailedError when r has failures, so a caller's
// exit code follows the report.
func Write(w io.Writer, format, name string, r *Report) error {
	var err error
	if format == "json" {
		err = WriteReportJSON(w, name, r)
	} else {
		err = WriteTable(w, name, r)
	}
	if err != nil {
		return err
	}
	if !r.OK() {
		return &FailedError{Name: name, Report: r}
	}
	return nil
}

// WriteTable prints one report for people: a header line with the name, the
// short digest and PASS or FAIL; a grid with one row per platform (platform,
// short digest, then per check "ok", "FAIL" or "-" when not run), expected
// platforms missing from the index included; the nodes line; what the run
// and start-up checks that passed ran (RanLines); then every failure and
// warning once, on its own line (see FindingLines).
func WriteTable(w io.Writer, name string, r *Report) error {
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", name, progress.ShortHex(r.Digest), verdict)
	names := checkNames(r)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := append([]string{"PLATFORM", "DIGEST"}, upper(names)...)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range r.Platforms {
		row := []string{p.Platform, progress.ShortHex(p.Digest)}
		for _, n := range names {
			row = append(row, cell(r, p, n))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	for _, p := range missingPlatforms(r) {
		row := []string{p, "-"}
		for _, n := range names {
			state := "-"
			if n == CheckCoverage {
				state = "FAIL"
			}
			row = append(row, state)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Nodes != nil {
		fmt.Fprintln(&b, r.Nodes.String())
	}
	if lines := RanLines(r); len(lines) > 0 {
		b.WriteString("\n")
		for _, l := range lines {
			fmt.Fprintln(&b, l)
		}
	}
	if lines := FindingLines(r); len(lines) > 0 {
		b.WriteString("\n")
		for _, l := range lines {
			fmt.Fprintln(&b, l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RanLines say, one line per platform and check, what the run and start-up
// checks that passed ran: "linux/arm64 run: ran under qemu-aarch64-static
// in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch:
// linux/arm64); /bin/sh -c true", so a passing table shows what was
// exercised (and which programs were not run).
func RanLines(r *Report) []string {
	var out []string
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if (c.Name == CheckRun || c.Name == CheckStart) && c.OK && !c.Warning && c.Reason != "" {
				out = append(out, p.Platform+" "+c.Name+": "+c.Reason)
			}
		}
	}
	return out
}

// FindingLines prints every failure and warning of r once, one line each:
// "PLATFORMS CHECK: FAIL: REASON", where a reason shared by several
// platforms is one line naming them all ("linux/amd64,linux/arm64
// contract: FAIL: ..."), in the order first seen. A problem about no
// platform is prefixed "index", a node "node NAME (PLATFORM)".
func FindingLines(r *Report) []string {
	type line struct {
		label     string
		f         Finding
		platforms []string
	}
	var order []*line
	seen := map[Finding]*line{}
	for _, f := range r.Findings() {
		if f.Node != "" {
			order = append(order, &line{label: "node " + f.Node + " (" + f.Platform + ")", f: f})
			continue
		}
		key := f
		key.Platform = ""
		l, ok := seen[key]
		if !ok {
			l = &line{f: f}
			seen[key] = l
			order = append(order, l)
		}
		if f.Platform != "" {
			l.platforms = append(l.platforms, f.Platform)
		}
	}
	out := make([]string, 0, len(order))
	for _, l := range order {
		label := l.label
		switch {
		case label != "":
			label += ":"
		case len(l.platforms) == 0:
			label = "index " + l.f.Check + ":"
		default:
			label = strings.Join(l.platforms, ",") + " " + l.f.Check + ":"
		}
		kind := "FAIL"
		if l.f.Severity == SeverityWarning {
			kind = "warning"
		}
		out = append(out, label+" "+kind+": "+l.f.Reason)
	}
	return out
}

// missingPlatforms lists the platforms of coverage problems that have no
// row of their own: expected platforms the index lacks.
func missingPlatforms(r *Report) []string {
	var out []string
	for _, p := range r.Problems {
		if p.Check != CheckCoverage || p.Platform == "" || p.Node != "" || slices.Contains(out, p.Platform) {
			continue
		}
		listed := slices.ContainsFunc(r.Platforms, func(pr PlatformReport) bool { return pr.Platform == p.Platform })
		if !listed {
			out = append(out, p.Platform)
		}
	}
	return out
}

// checkNames lists the check names present, known ones in table order.
func checkNames(r *Report) []string {
	var names []string
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	for _, p := range r.Problems {
		if p.Platform != "" && p.Node == "" && !slices.Contains(names, p.Check) {
			names = append(names, p.Check) // a missing platform's row, or a listed one's cell
		}
	}
	rank := func(n string) int {
		if i := slices.Index(checkOrder, n); i >= 0 {
			return i
		}
		return len(checkOrder)
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	return names
}

// cell is "FAIL" when check name failed on p's image or a problem names p
// and the check, "ok" when it passed, "-" when it did not run.
func cell(r *Report, p PlatformReport, name string) string {
	for _, pr := range r.Problems {
		if pr.Platform == p.Platform && pr.Check == name && pr.Node == "" && pr.Severity != SeverityWarning {
			return "FAIL"
		}
	}
	state := "-"
	for _, c := range p.Checks {
		if c.Name != name {
			continue
		}
		if !c.OK {
			return "FAIL"
		}
		state = "ok"
	}
	return state
}

func upper(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.ToUpper(v)
	}
	return out
}

// JSON is r as WriteReportJSON prints it.
func JSON(r *Report) JSONReport {
	jr := JSONReport{OK: r.OK(), Digest: r.Digest, Findings: r.Findings(), Platforms: []JSONPlatformReport{}, Nodes: r.Nodes}
	if jr.Findings == nil {
		jr.Findings = []Finding{}
	}
	for _, p := range r.Platforms {
		if p.Checks == nil {
			p.Checks = []Check{}
		}
		jr.Platforms = append(jr.Platforms, JSONPlatformReport{OK: p.OK(), PlatformReport: p})
	}
	return jr
}

// JSONReport is a Report with its verdict and findings, as WriteReportJSON
// prints it.
type JSONReport struct {
	OK        bool                 `json:"ok"`
	Digest    string               `json:"digest"`
	Findings  []Finding            `json:"findings"`
	Platforms []JSONPlatformReport `json:"platforms"`
	// Nodes, with --nodes: how many nodes were read, per platform, and
	// how many run an image of the reference.
	Nodes *NodeCount `json:"nodes,omitempty"`
}

// JSONPlatformReport is a PlatformReport with its verdict.
type JSONPlatformReport struct {
	OK bool `json:"ok"`
	PlatformReport
}

// JSONSchemaVersion is the version of Document, the JSON that verify
// prints (--format json) and writes (--metadata-file); it changes only
// when a field changes meaning or goes away.
const JSONSchemaVersion = 1

// Document is verify's JSON in every mode (files, --run, --contract,
// --attestations, --signature, --nodes): the same object on stdout with
// --format json and in --metadata-file, in the style of the build's
// metadata file (docs/metadata.md).
type Document struct {
	SchemaVersion int         `json:"schemaVersion"`
	Images        []ImageJSON `json:"images"`
}

// ImageJSON is one image's report with the reference as verify was given
// it.
type ImageJSON struct {
	Reference string `json:"reference"`
	JSONReport
}

// DocumentOf is the Document of r, the report of ref.
func DocumentOf(ref string, r *Report) Document {
	return Document{SchemaVersion: JSONSchemaVersion, Images: []ImageJSON{{Reference: ref, JSONReport: JSON(r)}}}
}

// WriteReportJSON prints the Document of r, the report of ref, indented. Each
// image carries "reference", "ok", "digest", "findings" (every failure and
// warning once, as Findings lists them: objects with "platform", "check",
// "path", "reason", "severity" and, for nodes, "node", for start-up steps
// "step", "user", "status" and "output") and "platforms"; each platform
// "ok", "platform", "digest" and "checks", passing ones included; each
// check "check", "ok", "reason" and, when set, "path" and "warning". Lists
// are never null.
func WriteReportJSON(w io.Writer, ref string, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(DocumentOf(ref, r))
}
