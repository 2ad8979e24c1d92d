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

// platformMarks are when one platform compiled, first wrote a layer, was
// checked, uploaded and done (-1: not seen).
type platformMarks struct{ compiled, writing, checking, uploading, done time.Duration }

// runMarks are the moments of one run the phases lie between (-1: not seen).
type runMarks struct {
	firstCompile, lastLink, lastDone, buildEnd, publishStart, pushed, checked, tagged, publishEnd time.Duration
	platform                                                                                      map[string]*platformMarks
}

// marksOf reads one run's events into bd (the phases with a duration of
// their own) and the moments the other phases lie between.
func marksOf(s sample, bd breakdown) runMarks {
	m := runMarks{-1, -1, -1, -1, -1, -1, -1, -1, -1, map[string]*platformMarks{}}
	get := func(p string) *platformMarks {
		if m.platform[p] == nil {
			m.platform[p] = &platformMarks{-1, -1, -1, -1, -1}
			bd.platform[p] = map[string]time.Duration{}
		}
		return m.platform[p]
	}
	for _, e := range s.Events {
		t := e.Time.Sub(s.Start)
		switch {
		case e.Kind == "phase-end" && e.Phase == "resolve":
			bd.run[runPhases[1]] = e.Duration
		case e.Kind == "phase-end" && e.Phase == "build":
			m.buildEnd = t
		case e.Kind == "phase-start" && e.Phase == "publish":
			m.publishStart = t
		case e.Kind == "phase-end" && e.Phase == "publish":
			m.publishEnd = t
		case e.Kind == "compiled":
			get(e.Platform).compiled = t
			bd.platform[e.Platform]["compile"] = e.Duration
			m.lastLink = max(m.lastLink, t)
		case e.Kind == "stage" && e.Stage == "compiling":
			if m.firstCompile < 0 {
				m.firstCompile = t
			}
		case e.Kind == "stage":
			pm := get(e.Platform)
			switch e.Stage {
			case "writing layer":
				if pm.writing < 0 {
					pm.writing = t
				}
			case "checking":
				pm.checking = t
			case "uploading":
				pm.uploading = t
			case "done":
				pm.done = t
				m.lastDone = max(m.lastDone, t)
			}
		case e.Kind == "log" && e.Message == "attested": // names its platform in a field
			get(e.field("platform"))
			for _, k := range []struct{ field, phase string }{{"sbom", "SBOM"}, {"provenance", "provenance"}} {
				if d, err := time.ParseDuration(e.field(k.field)); err == nil {
					bd.platform[e.field("platform")][k.phase] += d
				}
			}
		case e.Kind == "log" && e.Message == "pushed":
			m.pushed = t
		case e.Kind == "log" && e.Message == "manifests checked":
			m.checked = t
		case e.Kind == "log" && (e.Message == "tagged" || e.Message == "tag in place"):
			m.tagged = t
		}
	}
	return m
}

// breakdownOf splits one helperbuild run (s.Events) into phases.
func breakdownOf(s sample) (breakdown, bool) {
	if len(s.Events) == 0 {
		return breakdown{}, false
	}
	bd := breakdown{run: map[string]time.Duration{}, platform: map[string]map[string]time.Duration{}}
	bd.run[runPhases[0]] = s.Events[0].Time.Sub(s.Start)
	m := marksOf(s, bd)
	span := func(name string, from, to time.Duration) {
		if from >= 0 && to >= 0 {
			bd.run[name] = to - from
		}
	}
	span(runPhases[2], 0, m.firstCompile)
	span(runPhases[3], m.firstCompile, m.lastLink)
	span(runPhases[4], m.lastLink, m.lastDone)
	span(runPhases[5], m.lastDone, m.buildEnd)
	span(runPhases[6], m.publishStart, m.pushed)
	span(runPhases[7], m.pushed, m.checked)
	span(runPhases[8], m.checked, m.tagged)
	span(runPhases[9], m.publishEnd, s.Wall)
	span(runPhases[10], m.lastLink, s.Wall)
	for p, pm := range m.platform {
		ph := bd.platform[p]
		set := func(name string, from, to time.Duration) {
			if from >= 0 && to >= 0 {
				ph[name] = to - from
			}
		}
		set("link wait", pm.compiled, pm.writing)
		set("layer", pm.writing, pm.checking)
		set("check (+ attestations when inline)", pm.checking, pm.uploading)
		set("upload", pm.uploading, pm.done)
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
	fmt.Fprintf(&sb, "\n| CPU of the registry serving it (user+sys) |")
	for _, c := range cols {
		fmt.Fprintf(&sb, " %s |", cpuCell(c.samples, func(s sample) time.Duration { return s.RegistryCPU }))
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
