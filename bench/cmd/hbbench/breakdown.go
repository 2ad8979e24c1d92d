package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The phases of one helperbuild run, computed from its progress events
// (--progress json -v): the whole run's, then each platform's.
var (
	runPhases = []string{
		"process start → first event",
		"resolve (base images, registry access)",
		"start → first compile",
		"first compile → last link",
		"last link → every platform done",
		"index check",
		"publish: manifests by digest",
		"publish: manifest checks",
		"publish: tags",
		"publish end → exit",
		"last link → exit",
	}
	platformPhases = []string{
		"compile",
		"link wait",
		"layer",
		"check (+ attestations when inline)",
		"SBOM",
		"provenance",
		"upload",
	}
)

// breakdown is one run split into phases; a phase without its events is
// absent.
type breakdown struct {
	run      map[string]time.Duration
	platform map[string]map[string]time.Duration // platform -> phase -> time
}

// breakdownOf splits one helperbuild run (s.Events) into phases.
func breakdownOf(s sample) (breakdown, bool) {
	if len(s.Events) == 0 {
		return breakdown{}, false
	}
	bd := breakdown{run: map[string]time.Duration{}, platform: map[string]map[string]time.Duration{}}
	at := func(e event) time.Duration { return e.Time.Sub(s.Start) }
	var firstCompile, lastLink, lastDone, buildEnd, publishStart, pushed, checked, tagged, publishEnd time.Duration = -1, -1, -1, -1, -1, -1, -1, -1, -1
	// per platform: when it compiled, first wrote a layer, checked, uploaded
	type marks struct{ compiled, writing, checking, uploading, done time.Duration }
	pm := map[string]*marks{}
	get := func(p string) *marks {
		if pm[p] == nil {
			pm[p] = &marks{-1, -1, -1, -1, -1}
			bd.platform[p] = map[string]time.Duration{}
		}
		return pm[p]
	}
	bd.run[runPhases[0]] = at(s.Events[0])
	for _, e := range s.Events {
		t := at(e)
		switch {
		case e.Kind == "phase-end" && e.Phase == "resolve":
			bd.run[runPhases[1]] = e.Duration
		case e.Kind == "phase-end" && e.Phase == "build":
			buildEnd = t
		case e.Kind == "phase-start" && e.Phase == "publish":
			publishStart = t
		case e.Kind == "phase-end" && e.Phase == "publish":
			publishEnd = t
		case e.Kind == "compiled":
			m := get(e.Platform)
			m.compiled = t
			bd.platform[e.Platform]["compile"] = e.Duration
			lastLink = max(lastLink, t)
		case e.Kind == "stage" && e.Stage == "compiling":
			if firstCompile < 0 {
				firstCompile = t
			}
		case e.Kind == "stage":
			m := get(e.Platform)
			switch e.Stage {
			case "writing layer":
				if m.writing < 0 {
					m.writing = t
				}
			case "checking":
				m.checking = t
			case "uploading":
				m.uploading = t
			case "done":
				m.done = t
				lastDone = max(lastDone, t)
			}
		case e.Kind == "log" && e.Message == "attested":
			for _, k := range []struct{ field, phase string }{{"sbom", "SBOM"}, {"provenance", "provenance"}} {
				if d, err := time.ParseDuration(e.field(k.field)); err == nil {
					get(e.field("platform")) // attested names its platform in a field
					bd.platform[e.field("platform")][k.phase] += d
				}
			}
		case e.Kind == "log" && e.Message == "pushed":
			pushed = t
		case e.Kind == "log" && e.Message == "manifests checked":
			checked = t
		case e.Kind == "log" && e.Message == "tagged":
			tagged = t
		}
	}
	span := func(name string, from, to time.Duration) {
		if from >= 0 && to >= 0 {
			bd.run[name] = to - from
		}
	}
	span(runPhases[2], 0, firstCompile)
	span(runPhases[3], firstCompile, lastLink)
	span(runPhases[4], lastLink, lastDone)
	span(runPhases[5], lastDone, buildEnd)
	span(runPhases[6], publishStart, pushed)
	span(runPhases[7], pushed, checked)
	span(runPhases[8], checked, tagged)
	span(runPhases[9], publishEnd, s.Wall)
	span(runPhases[10], lastLink, s.Wall)
	for p, m := range pm {
		ph := bd.platform[p]
		if m.compiled >= 0 && m.writing >= 0 {
			ph["link wait"] = m.writing - m.compiled
		}
		if m.writing >= 0 && m.checking >= 0 {
			ph["layer"] = m.checking - m.writing
		}
		if m.checking >= 0 && m.uploading >= 0 {
			ph["check (+ attestations when inline)"] = m.uploading - m.checking
		}
		if m.uploading >= 0 && m.done >= 0 {
			ph["upload"] = m.done - m.uploading
		}
	}
	return bd, true
}

// medianOf is the median of the durations f gives for the runs that have
// the phase (ok), and how many runs had it.
func medianOf(bds []breakdown, f func(breakdown) (time.Duration, bool)) (time.Duration, int) {
	var ds []time.Duration
	for _, bd := range bds {
		if d, ok := f(bd); ok {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	if len(ds)%2 == 1 {
		return ds[len(ds)/2], len(ds)
	}
	return (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2, len(ds)
}

func breakdowns(s []sample) []breakdown {
	var out []breakdown
	for _, x := range s {
		if bd, ok := breakdownOf(x); ok {
			out = append(out, bd)
		}
	}
	return out
}

func fmtMs(d time.Duration, n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f", d.Seconds())
}

// breakdownColumn is one column of a run-phase table: a step in a mode.
type breakdownColumn struct {
	name    string
	samples []sample
}

// runPhaseTable is the run phases (rows) of several steps (columns), in
// seconds, median of the runs.
func runPhaseTable(cols []breakdownColumn) string {
	var sb strings.Builder
	var bds [][]breakdown
	sb.WriteString("| phase (s, median) |")
	for _, c := range cols {
		fmt.Fprintf(&sb, " %s |", c.name)
		bds = append(bds, breakdowns(c.samples))
	}
	sb.WriteString("\n|---|" + strings.Repeat("---:|", len(cols)) + "\n")
	for _, ph := range runPhases {
		fmt.Fprintf(&sb, "| %s |", ph)
		for i := range cols {
			d, n := medianOf(bds[i], func(bd breakdown) (time.Duration, bool) { d, ok := bd.run[ph]; return d, ok })
			fmt.Fprintf(&sb, " %s |", fmtMs(d, n))
		}
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "| CPU of helperbuild itself (user+sys) |")
	for _, c := range cols {
		fmt.Fprintf(&sb, " %s |", cpuCell(c.samples, func(s sample) time.Duration { return s.CPU }))
	}
	fmt.Fprintf(&sb, "\n| CPU of its go builds (user+sys) |")
	for _, c := range cols {
		fmt.Fprintf(&sb, " %s |", cpuCell(c.samples, func(s sample) time.Duration { return s.ChildCPU }))
	}
	sb.WriteString("\n")
	return sb.String()
}

// cpuCell is the median of f over s, in seconds.
func cpuCell(s []sample, f func(sample) time.Duration) string {
	var ds []time.Duration
	for _, x := range s {
		ds = append(ds, f(x))
	}
	if len(ds) == 0 {
		return ""
	}
	slices.Sort(ds)
	m := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		m = (ds[len(ds)/2-1] + m) / 2
	}
	return fmt.Sprintf("%.2f", m.Seconds())
}

// platformPhaseTable is the platform phases (rows) per platform
// (columns) of one step: idle median, and the busy median in brackets.
func platformPhaseTable(platforms []string, idle, busy []sample) string {
	bi, bb := breakdowns(idle), breakdowns(busy)
	var sb strings.Builder
	sb.WriteString("| phase (s, median; busy in brackets) |")
	for _, p := range platforms {
		fmt.Fprintf(&sb, " %s |", p)
	}
	sb.WriteString("\n|---|" + strings.Repeat("---:|", len(platforms)) + "\n")
	for _, ph := range platformPhases {
		fmt.Fprintf(&sb, "| %s |", ph)
		for _, p := range platforms {
			f := func(bd breakdown) (time.Duration, bool) { d, ok := bd.platform[p][ph]; return d, ok }
			cell := fmtMs(medianOf(bi, f))
			if b := fmtMs(medianOf(bb, f)); b != "" {
				cell += " (" + b + ")"
			}
			fmt.Fprintf(&sb, " %s |", cell)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}
