package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// cpuSpans are the parts of a run the CPU table splits: the whole run,
// then start → first compile, first compile → last link and last link →
// exit (from helperbuild's events; a run without them, ko's, has only the
// whole).
var cpuSpans = []string{"whole run", "start → first compile", "first compile → last link", "last link → exit"}

// cpuSplit is one run's CPU per class and span, and its wall per span
// (ok[i]: span i was seen).
type cpuSplit struct {
	cpu  [4][cpuClasses]time.Duration
	wall [4]time.Duration
	ok   [4]bool
	// unattributed is the children's CPU wait4 counted that no sample of
	// the process tree saw (short processes, the last ticks of each).
	unattributed time.Duration
}

// splitOf splits one run's Series by its events; false without a series.
func splitOf(s sample) (cpuSplit, bool) {
	var c cpuSplit
	if len(s.Series) == 0 {
		return c, false
	}
	c.cpu[0] = cpuBetween(s.Series, -1, s.Wall)
	c.wall[0], c.ok[0] = s.Wall, true
	var kids time.Duration
	for _, k := range []int{cpuGo, cpuCompile, cpuLink, cpuOther} {
		kids += c.cpu[0][k]
	}
	c.unattributed = max(s.ChildCPU-kids, 0)
	if len(s.Events) > 0 {
		m := marksOf(s, breakdown{run: map[string]time.Duration{}, platform: map[string]map[string]time.Duration{}})
		for i, sp := range [][2]time.Duration{{0, m.firstCompile}, {m.firstCompile, m.lastLink}, {m.lastLink, s.Wall}} {
			if sp[0] >= 0 && sp[1] >= sp[0] {
				c.cpu[i+1] = cpuBetween(s.Series, sp[0], sp[1])
				c.wall[i+1], c.ok[i+1] = sp[1]-sp[0], true
			}
		}
	}
	return c, true
}

// cpuTable is where the CPU of several steps (columns) went: per process
// class (rows), the whole run's and, in brackets, each span's, medians of
// the runs, in seconds; and the wall time of the same spans.
func cpuTable(cols []breakdownColumn) string {
	var splits [][]cpuSplit
	for _, c := range cols {
		var ss []cpuSplit
		for _, s := range c.samples {
			if x, ok := splitOf(s); ok {
				ss = append(ss, x)
			}
		}
		splits = append(splits, ss)
	}
	var sb strings.Builder
	sb.WriteString("| s, median: whole run (start → first compile / first compile → last link / last link → exit) |")
	for _, c := range cols {
		fmt.Fprintf(&sb, " %s |", c.name)
	}
	sb.WriteString("\n|---|" + strings.Repeat("---:|", len(cols)) + "\n")
	line := func(name string, f func(cpuSplit, int) (time.Duration, bool)) {
		fmt.Fprintf(&sb, "| %s |", name)
		for _, ss := range splits {
			fmt.Fprintf(&sb, " %s |", spanCell(ss, f))
		}
		sb.WriteString("\n")
	}
	line("wall", func(c cpuSplit, i int) (time.Duration, bool) { return c.wall[i], c.ok[i] })
	for k := range cpuClasses {
		line("CPU: "+cpuClassNames[k], func(c cpuSplit, i int) (time.Duration, bool) { return c.cpu[i][k], c.ok[i] })
		if k == cpuOther {
			line("CPU: children not seen by the sampler (wait4 − the above)", func(c cpuSplit, i int) (time.Duration, bool) { return c.unattributed, i == 0 })
		}
	}
	line("CPU: all of the above", func(c cpuSplit, i int) (time.Duration, bool) {
		var t time.Duration
		for k := range cpuClasses {
			t += c.cpu[i][k]
		}
		if i == 0 {
			t += c.unattributed
		}
		return t, c.ok[i]
	})
	return sb.String()
}

// spanCell is "W (a / b / c)": the median over the runs of f for the
// whole run and each span; a span no run had is "-".
func spanCell(ss []cpuSplit, f func(cpuSplit, int) (time.Duration, bool)) string {
	var parts [4]string
	for i := range parts {
		var ds []time.Duration
		for _, c := range ss {
			if d, ok := f(c, i); ok {
				ds = append(ds, d)
			}
		}
		if len(ds) == 0 {
			parts[i] = "-"
			continue
		}
		slices.Sort(ds)
		m := ds[len(ds)/2]
		if len(ds)%2 == 0 {
			m = (ds[len(ds)/2-1] + m) / 2
		}
		parts[i] = fmt.Sprintf("%.2f", m.Seconds())
	}
	if parts[1] == "-" && parts[2] == "-" && parts[3] == "-" {
		return parts[0]
	}
	return fmt.Sprintf("%s (%s / %s / %s)", parts[0], parts[1], parts[2], parts[3])
}
