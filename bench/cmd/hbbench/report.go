package main

import (
	"archive/tar"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// row is one line of the report.
type row struct {
	Workload    string
	Step        string
	Samples     []sample
	Busy        []sample // the same step beside busy loops (-busy)
	Note        string   // instead of numbers, e.g. why it was not measured
	RSS         bool     // show peak RSS (of the idle runs)
	Bytes       bool     // show uploaded layer bytes (of the idle runs)
	Compare     string   // ratio or difference
	BusyCompare string   // the same for the busy runs
	Target      string
	OK          string // "yes", "NO" or "", then "; busy yes" or "; busy NO"
}

// summaryRow is one workload's push ratios, idle and busy (0: not measured).
type summaryRow struct {
	Workload             string
	FloorIdle, FloorBusy float64
	KoIdle, KoBusy       float64
}

func (b *bench) add(r row) *row {
	b.rows = append(b.rows, r)
	return &b.rows[len(b.rows)-1]
}

func median(s []sample) time.Duration {
	d := make([]time.Duration, len(s))
	for i, x := range s {
		d[i] = x.Wall
	}
	return medianDur(d)
}

func medianInt(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func medianRSS(s []sample) int64 {
	v := make([]int64, len(s))
	for i, x := range s {
		v[i] = x.PeakRSS
	}
	return medianInt(v)
}

func maxRSS(s []sample) int64 {
	var m int64
	for _, x := range s {
		m = max(m, x.PeakRSS)
	}
	return m
}

func maxUp(s []sample) int64 {
	var m int64
	for _, x := range s {
		m = max(m, x.Up.BlobBytes)
	}
	return m
}

// pairedRatio is the median over rounds of s[i]/base[i] (the steps ran in
// the same round, so a burst of other load hits both), or the ratio of the
// medians when the runs are not paired.
func pairedRatio(s, base []sample) float64 {
	if len(s) == 0 || len(base) == 0 {
		return 0
	}
	if len(s) != len(base) {
		return float64(median(s)) / float64(median(base))
	}
	r := make([]sample, len(s))
	for i := range s {
		r[i] = sample{Wall: time.Duration(float64(time.Second) * float64(s[i].Wall) / float64(base[i].Wall))}
	}
	return median(r).Seconds()
}

// pairedDiff is the median over rounds of s[i]-base[i].
func pairedDiff(s, base []sample) time.Duration {
	if len(s) != len(base) {
		return median(s) - median(base)
	}
	d := make([]sample, len(s))
	for i := range s {
		d[i] = sample{Wall: s[i].Wall - base[i].Wall}
	}
	return median(d)
}

func ratio(s, base []sample, name string) string {
	r := pairedRatio(s, base)
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f× %s", r, name)
}

func okRatio(s, base []sample, limit float64) string {
	r := pairedRatio(s, base)
	if r == 0 {
		return ""
	}
	return verdict(r <= limit)
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// sameWithinNoise: the medians of the peak RSS differ by no more than the
// larger of 10 % and the spread (max-min) seen within either set.
func sameWithinNoise(a, b []sample) bool {
	spread := func(s []sample) int64 {
		lo, hi := int64(-1), int64(0)
		for _, x := range s {
			if lo < 0 || x.PeakRSS < lo {
				lo = x.PeakRSS
			}
			hi = max(hi, x.PeakRSS)
		}
		return hi - lo
	}
	ma, mb := medianRSS(a), medianRSS(b)
	allowed := max(ma/10, spread(a), spread(b))
	d := mb - ma
	if d < 0 {
		d = -d
	}
	return d <= allowed
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func fmtMiB(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

func fmtMB(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

func fmtBytes(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// timesCell is a median and the range of samples.
func timesCell(s []sample) (med, rng string) {
	if len(s) == 0 {
		return "", ""
	}
	lo, hi := s[0].Wall, s[0].Wall
	for _, x := range s {
		lo, hi = min(lo, x.Wall), max(hi, x.Wall)
	}
	return fmtDur(median(s)), fmt.Sprintf("%.2f – %.2f", lo.Seconds(), hi.Seconds())
}

func fmtRatio(r float64) string {
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", r)
}

// writeFacts writes the report's title and its list of facts: the
// machine, the tools, how the runs were made and measured.
func (b *bench) writeFacts(sb *strings.Builder) {
	cfg := b.cfg
	fmt.Fprintf(sb, "## helperbuild benchmark, %s\n\n", b.start.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(sb, "- CPUs: %d; /proc/loadavg at start: %s; at end: %s (other work on the machine adds noise)\n", b.facts.cpus, b.facts.load, b.facts.loadEnd)
	fmt.Fprintf(sb, "- Go: %s\n", b.facts.goVersion)
	fmt.Fprintf(sb, "- helperbuild: %s\n", orNA(b.facts.hbVersion, b.hbErr))
	fmt.Fprintf(sb, "- ko: %s\n", orNA(b.facts.koVersion, b.koErr))
	fmt.Fprintf(sb, "- platforms: %s; --jobs %d; %d measured rounds after %d warm-up round(s); in each round every step of a workload runs once, in table order\n",
		strings.Join(cfg.platforms, ","), cfg.jobs, cfg.runs, cfg.warmups)
	fmt.Fprintf(sb, "- times: wall clock, median of the rounds; \"compared\": median over rounds of the per-round ratio (or difference)\n")
	delay := ""
	if cfg.registryDelay > 0 {
		delay = fmt.Sprintf("; the proxy holds every request %s before forwarding it (-registry-delay: a network round trip, for helperbuild and ko alike)", cfg.registryDelay)
	}
	fmt.Fprintf(sb, "- registry: docker-registry on 127.0.0.1 behind a counting proxy%s; \"uploaded\" = request bytes of blob uploads, completed blob uploads and all requests to the registry (medians per run)\n", delay)
	fmt.Fprintf(sb, "- CPU: user+sys seconds (median) of the measured process itself + of its go build children (wait4 minus the children's time in /proc/PID/stat, sampled every 5 ms); for the floor, of hbbench's floor child (it only starts the go builds) + of the go builds (their wait4 times, as the child counted them); registry: user+sys of the docker-registry process read before and after the command (it is idle between commands), the CPU it spent serving that command on the same CPUs (the counting proxy's, in hbbench, is not counted)\n")
	fmt.Fprintf(sb, "- peak RSS = VmHWM of the measured process alone (not its go build children; for the floor, hbbench's floor child), sampled every 5 ms; median of runs\n")
	fmt.Fprintf(sb, "- instrument: every timed command, the floor included, runs in hbbench's session in a process group of its own, its VmHWM read every 5 ms and (-proc-every %s) its process tree walked for the CPU by process; the floor's go builds are run by hbbench started again as a floor child, so the sampling's cost weighs on both sides of every comparison\n", cfg.procEvery)
	if cfg.busy > 0 {
		where := "each in a session of its own (`-busy-session own`: an autogroup of its own, like another user's or job's load)"
		if cfg.busySession == busyShared {
			where = "in hbbench's session (`-busy-session shared`: the command's autogroup, the CPUs shared per thread)"
		}
		reg := "hbbench's session, the command's"
		if cfg.registrySession == busyOwn {
			reg = "a session of its own"
		}
		where += fmt.Sprintf("; the registry in %s (`-registry-session %s`)", reg, cfg.registrySession)
		fmt.Fprintf(sb, "- busy: in each round every step runs a second time with %d `sh -c '%s'` (one per CPU) started right before the timed command and stopped right after it, %s; sched_autogroup_enabled=%s; uploaded bytes and peak RSS are from the idle runs\n",
			cfg.busy, busyLoop, where, strings.TrimSpace(readFile("/proc/sys/kernel/sched_autogroup_enabled")))
	}
}

// report is the markdown report: facts, the table, the idle/busy summary.
func (b *bench) report() string {
	var sb strings.Builder
	cfg := b.cfg
	b.writeFacts(&sb)
	busy := cfg.busy > 0
	sb.WriteString("\n")
	if busy {
		sb.WriteString("| workload | step | median | min – max | compared | busy: median (min – max) | busy: compared | target | met | uploaded | peak RSS | CPU: self + go builds; registry |\n")
		sb.WriteString("|---|---|---:|---:|---|---:|---|---|---|---:|---:|---:|\n")
	} else {
		sb.WriteString("| workload | step | median | min – max | compared | target | met | uploaded | peak RSS | CPU: self + go builds; registry |\n")
		sb.WriteString("|---|---|---:|---:|---|---|---|---:|---:|---:|\n")
	}
	for _, r := range b.rows {
		med, rng := timesCell(r.Samples)
		up, rss := "", ""
		if r.Bytes {
			v := make([]int64, len(r.Samples))
			var blobs, reqs []int64
			for i, s := range r.Samples {
				v[i] = s.Up.BlobBytes
				blobs = append(blobs, s.Up.BlobUploads)
				reqs = append(reqs, s.Up.Requests)
			}
			up = fmt.Sprintf("%s (%d blobs; %d requests)", fmtBytes(medianInt(v)), medianInt(blobs), medianInt(reqs))
		}
		if r.RSS {
			rss = fmtMiB(medianRSS(r.Samples))
		}
		cpu := cpuSum(r.Samples)
		step := r.Step
		if r.Note != "" {
			step += ": " + r.Note
		}
		if busy {
			bmed, brng := timesCell(r.Busy)
			if bmed != "" {
				bmed += " (" + brng + ")"
			}
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Workload, step, med, rng, r.Compare, bmed, r.BusyCompare, r.Target, r.OK, up, rss, cpu)
		} else {
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Workload, step, med, rng, r.Compare, r.Target, r.OK, up, rss, cpu)
		}
	}
	for _, sec := range b.sections {
		fmt.Fprintf(&sb, "\n#### Where the time goes: %s\n\n", sec.title)
		sb.WriteString("From helperbuild's progress events (`--progress json -v`), relative to the process start (\"start\"); \"last link → exit\" is the fixed cost after the compiler, \"start → first compile\" the one before it. CPU: user+sys from wait4 and /proc/PID/stat (clock ticks of 10 ms).\n\n")
		sb.WriteString(runPhaseTable(sec.cols))
		if len(sec.cpuCols) > 0 && cfg.procEvery > 0 {
			fmt.Fprintf(&sb, "\nWhere the CPU goes, by process (issue 41): the process tree of the command, walked every %s (-proc-every; /proc/PID/task/*/children, each process's own utime+stime by its command name), the registry's and hbbench's own CPU (its counting proxy and samplers) beside it; the same spans' wall time first. The floor's columns are its go builds, run by hbbench's floor child (\"the command itself\") under the same sampling.\n\n", cfg.procEvery)
			sb.WriteString(cpuTable(sec.cpuCols))
		}
		for _, pt := range sec.platforms {
			fmt.Fprintf(&sb, "\nPer platform, %s:\n\n", pt.name)
			sb.WriteString(platformPhaseTable(cfg.platforms, pt.idle, pt.busy))
		}
	}
	sb.WriteString("\n")
	if busy && len(b.summary) > 0 {
		fmt.Fprintf(&sb, "\n### helperbuild push, idle and beside %d busy loops\n\n", cfg.busy)
		fmt.Fprintf(&sb, "Median over rounds of the per-round ratio. Targets: push ÷ floor ≤ %.2f× idle (mid, held: ≤ %.2f×), ≤ %.2f× busy; push ÷ ko ≤ %.2f× idle, < 1× busy.\n\n", idlePushFloor, idlePushFloorMid, busyPushFloor, idlePushKo)
		sb.WriteString("| workload | push ÷ floor, idle | push ÷ floor, busy | push ÷ ko, idle | push ÷ ko, busy |\n|---|---:|---:|---:|---:|\n")
		for _, s := range b.summary {
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s |\n", s.Workload, fmtRatio(s.FloorIdle), fmtRatio(s.FloorBusy), fmtRatio(s.KoIdle), fmtRatio(s.KoBusy))
		}
	}
	return sb.String()
}

// cpuSum is the median CPU of the process itself and of its go builds
// ("+ N" alone when the process's own rounds to 0), in seconds, and
// the registry's while it served the command ("; registry N s"), when the
// command used the registry.
func cpuSum(s []sample) string {
	self := cpuCell(s, func(x sample) time.Duration { return x.CPU })
	kids := cpuCell(s, func(x sample) time.Duration { return x.ChildCPU })
	if kids == "" {
		return ""
	}
	reg := ""
	if slices.ContainsFunc(s, func(x sample) bool { return x.RegistryCPU > 0 }) {
		reg = "; registry " + cpuCell(s, func(x sample) time.Duration { return x.RegistryCPU }) + " s"
	}
	if self == "0.00" {
		return "+ " + kids + " s" + reg
	}
	return self + " + " + kids + " s" + reg
}

func orNA(v string, err error) string {
	if err != nil {
		return "n/a: " + err.Error()
	}
	return v
}

// layoutBinarySize is the size of the largest file in the last layer of the
// first image of an OCI layout: the binary helperbuild put there.
func layoutBinarySize(dir string) int64 {
	p, err := layout.FromPath(dir)
	if err != nil {
		return 0
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return 0
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) == 0 {
		return 0
	}
	// The layout's top entry is the image index; its first manifest is the first platform.
	inner, err := idx.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		return 0
	}
	img, err := firstImage(inner)
	if err != nil {
		return 0
	}
	layers, err := img.Layers()
	if err != nil || len(layers) == 0 {
		return 0
	}
	rc, err := layers[len(layers)-1].Uncompressed()
	if err != nil {
		return 0
	}
	defer rc.Close()
	var biggest int64
	tr := tar.NewReader(rc)
	for range 10000 {
		h, err := tr.Next()
		if err == io.EOF || err != nil {
			break
		}
		biggest = max(biggest, h.Size)
	}
	return biggest
}

func firstImage(idx interface {
	IndexManifest() (*v1.IndexManifest, error)
	Image(v1.Hash) (v1.Image, error)
}) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) == 0 {
		return nil, fmt.Errorf("empty index")
	}
	return idx.Image(im.Manifests[0].Digest)
}
