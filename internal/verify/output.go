package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints one report for people: a header line with the name, the
// short digest and PASS or FAIL; a grid with one row per platform (platform,
// short digest, then per check "ok", "FAIL" or "-" when not run); then every
// failure and warning on its own line, prefixed with its platform and check.
// Index-level problems come last, prefixed with "index".
func WriteTable(w io.Writer, name string, r *Report) error {
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", name, shortDigest(r.Digest), verdict)
	names := checkNames(r)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := append([]string{"PLATFORM", "DIGEST"}, upper(names)...)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range r.Platforms {
		row := []string{p.Platform, shortDigest(p.Digest)}
		for _, n := range names {
			row = append(row, cell(p.Checks, n))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, f := range r.Findings() {
		fmt.Fprintln(&b, f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Findings lists every failure and warning once: a reason shared by
// several platforms is one line naming them all ("linux/amd64,linux/arm64
// contract: FAIL: ..."), in the order first seen; index-level problems
// come last, prefixed with "index".
func (r *Report) Findings() []string {
	type finding struct {
		check, kind, reason string
		platforms           []string
	}
	var order []*finding
	seen := map[string]*finding{}
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			kind := "FAIL"
			switch {
			case !c.OK:
			case c.Warning:
				kind = "warning"
			default:
				continue
			}
			key := c.Name + "\x00" + kind + "\x00" + c.Reason
			f, ok := seen[key]
			if !ok {
				f = &finding{check: c.Name, kind: kind, reason: c.Reason}
				seen[key] = f
				order = append(order, f)
			}
			f.platforms = append(f.platforms, p.Platform)
		}
	}
	var out []string
	for _, f := range order {
		out = append(out, fmt.Sprintf("%s %s: %s: %s", strings.Join(f.platforms, ","), f.check, f.kind, f.reason))
	}
	for _, problem := range r.Problems {
		out = append(out, "index: FAIL: "+problem)
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
	rank := func(n string) int {
		if i := slices.Index(checkOrder, n); i >= 0 {
			return i
		}
		return len(checkOrder)
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	return names
}

func cell(checks []Check, name string) string {
	state := "-"
	for _, c := range checks {
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

// shortDigest is the first 12 hex digits of a digest.
func shortDigest(d string) string {
	_, hex, found := strings.Cut(d, ":")
	if !found {
		hex = d
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	return hex
}

// jsonReport is a Report with its verdict, for WriteJSON.
type jsonReport struct {
	OK        bool                 `json:"ok"`
	Digest    string               `json:"digest"`
	Problems  []string             `json:"problems"`
	Platforms []jsonPlatformReport `json:"platforms"`
}

type jsonPlatformReport struct {
	OK bool `json:"ok"`
	PlatformReport
}

// WriteJSON prints reports keyed by image name as one indented JSON object
// (keys sorted). Each report carries "ok", "digest", "problems" and
// "platforms"; each platform "ok", "platform", "digest" and "checks"; each
// check "name", "ok", "reason" and, for warnings, "warning". Lists are
// never null.
func WriteJSON(w io.Writer, reports map[string]*Report) error {
	out := make(map[string]jsonReport, len(reports))
	for name, r := range reports {
		jr := jsonReport{OK: r.OK(), Digest: r.Digest, Problems: r.Problems, Platforms: []jsonPlatformReport{}}
		if jr.Problems == nil {
			jr.Problems = []string{}
		}
		for _, p := range r.Platforms {
			if p.Checks == nil {
				p.Checks = []Check{}
			}
			jr.Platforms = append(jr.Platforms, jsonPlatformReport{OK: p.OK(), PlatformReport: p})
		}
		out[name] = jr
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
