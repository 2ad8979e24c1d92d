package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupPlace is where a run's cgroup is made: under the caller's own
// cgroup, in the unified (v2) hierarchy when it hands memory and pids to
// children, else in the v1 memory (and pids) hierarchies.
type cgroupPlace struct {
	version int
	memory  string // the parent directory: v2's one, v1's memory hierarchy's
	pids    string // v1's pids hierarchy's parent directory, "" without one
}

// String names the mechanism, for reports.
func (p cgroupPlace) String() string { return "cgroup v" + strconv.Itoa(p.version) }

// TotalLimits says how the runs of this machine are bounded in total: the
// cgroup version that holds each run's memory (Limits.Memory) and
// processes (Limits.Processes) together, or a *NoTotalLimitError when only
// the per-process rlimits apply.
func (r *Runner) TotalLimits() (string, error) {
	p, err := findCgroup()
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// findCgroup finds where runs' cgroups can be made.
func findCgroup() (cgroupPlace, error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return cgroupPlace{}, &NoTotalLimitError{V2: err, V1: err}
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupPlace{}, &NoTotalLimitError{V2: err, V1: err}
	}
	p, err2 := findV2(string(mounts), string(own))
	if err2 == nil {
		return p, nil
	}
	p, err1 := findV1(string(mounts), string(own))
	if err1 == nil {
		return p, nil
	}
	return cgroupPlace{}, &NoTotalLimitError{V2: err2, V1: err1}
}

// findV2 is the caller's cgroup v2 directory, when it has the memory and
// pids controllers and hands them to children (enabling them if it may).
func findV2(mountinfo, own string) (cgroupPlace, error) {
	dir, err := cgroupDir(mountinfo, own, "cgroup2", "")
	if err != nil {
		return cgroupPlace{}, err
	}
	ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return cgroupPlace{}, err
	}
	for _, c := range []string{"memory", "pids"} {
		if !slices.Contains(strings.Fields(string(ctl)), c) {
			return cgroupPlace{}, fmt.Errorf("%s has no %s controller", dir, c)
		}
	}
	sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return cgroupPlace{}, err
	}
	if f := strings.Fields(string(sub)); !slices.Contains(f, "memory") || !slices.Contains(f, "pids") {
		err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0)
		if errors.Is(err, syscall.EBUSY) {
			return cgroupPlace{}, fmt.Errorf("%s holds processes, so it cannot hand memory and pids to a child (run helperbuild in a cgroup of its own whose parent delegates them)", dir)
		}
		if err != nil {
			return cgroupPlace{}, fmt.Errorf("enable memory and pids for children of %s: %w", dir, err)
		}
	}
	return cgroupPlace{version: 2, memory: dir}, nil
}

// findV1 is the caller's cgroup directory in the v1 memory hierarchy, and
// in the pids hierarchy when there is one.
func findV1(mountinfo, own string) (cgroupPlace, error) {
	mem, err := cgroupDir(mountinfo, own, "cgroup", "memory")
	if err != nil {
		return cgroupPlace{}, err
	}
	if err := syscall.Access(mem, 2); err != nil { // W_OK
		return cgroupPlace{}, fmt.Errorf("%s: %w", mem, err)
	}
	pids, err := cgroupDir(mountinfo, own, "cgroup", "pids")
	if err != nil || syscall.Access(pids, 2) != nil {
		pids = ""
	}
	return cgroupPlace{version: 1, memory: mem, pids: pids}, nil
}

// cgroupDir is the directory of the caller's cgroup in the hierarchy
// mounted with fstype (and, for v1, the controller), from the text of
// /proc/self/mountinfo and /proc/self/cgroup.
func cgroupDir(mountinfo, own, fstype, controller string) (string, error) {
	var path string
	found := false
	for _, line := range strings.Split(own, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if (controller == "" && f[0] == "0" && f[1] == "") || (controller != "" && slices.Contains(strings.Split(f[1], ","), controller)) {
			path, found = f[2], true
			break
		}
	}
	what := fstype
	if controller != "" {
		what += " " + controller
	}
	if !found {
		return "", fmt.Errorf("/proc/self/cgroup names no %s hierarchy", what)
	}
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || g[0] != fstype {
			continue
		}
		if controller != "" && !slices.Contains(strings.Split(g[2], ","), controller) {
			continue
		}
		root, mnt := f[3], f[4]
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue // this mount does not show the caller's cgroup
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", fmt.Errorf("no %s mount shows the caller's cgroup %s", what, path)
}

// runCgroup is the cgroup (one per hierarchy) of one run.
type runCgroup struct {
	version     int
	memory      string // the run's directory in the memory hierarchy (v2: its only one)
	pids        string // v1's pids directory, "" without one
	memoryLimit uint64
}

// cgroupPrefix starts the name of every run's cgroup, followed by the
// maker's PID namespace (its inode number), the maker's PID in it, a dash
// and a random number. The namespace is in the name because a PID means
// nothing outside its namespace: processes of another PID namespace (a
// container or a chroot-like root sharing the host's cgroup tree) may make
// their runs' cgroups in the same directory, and a sweep that judged their
// PIDs by its own namespace would remove a cgroup another process had just
// made and was about to enter.
const cgroupPrefix = "helperbuild-sandbox-"

// pidNamespace returns the inode number of the caller's PID namespace, 0
// where it cannot be read (then nothing is swept).
func pidNamespace() uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
}

// sweepable reports whether name is a run's cgroup made in PID namespace ns
// by a process that has ended. Names of another namespace, and those of
// helperbuild versions before the namespace was in the name, are never
// sweepable: their makers cannot be judged from here.
func sweepable(name string, ns uint64) bool {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	if !ok || ns == 0 {
		return false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 {
		return false
	}
	madeIn, err1 := strconv.ParseUint(parts[0], 10, 64)
	pid, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || madeIn != ns || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// sweepCgroups removes the runs' cgroups under p that a process of this PID
// namespace which has ended (killed before it could remove them) left
// behind. One whose maker lives is left alone: it may be about to put a run
// into it.
func sweepCgroups(p cgroupPlace) {
	ns := pidNamespace()
	for _, d := range []string{p.memory, p.pids} {
		if d == "" {
			continue
		}
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.IsDir() && sweepable(e.Name(), ns) {
				_ = syscall.Rmdir(filepath.Join(d, e.Name())) // fails while a process is in it
			}
		}
	}
}

// newRunCgroup makes a run's cgroup under p and sets l's total bounds.
func newRunCgroup(p cgroupPlace, l Limits) (c *runCgroup, err error) {
	c = &runCgroup{version: p.version, memoryLimit: l.Memory}
	defer func() {
		if err != nil {
			c.remove()
		}
	}()
	sweepCgroups(p)
	prefix := cgroupPrefix + strconv.FormatUint(pidNamespace(), 10) + "-" + strconv.Itoa(os.Getpid()) + "-"
	if c.memory, err = os.MkdirTemp(p.memory, prefix); err != nil {
		return c, err
	}
	mem, procs := strconv.FormatUint(l.Memory, 10), strconv.FormatUint(l.Processes, 10)
	settings := [][2]string{{"memory.max", mem}, {"memory.swap.max", "0"}, {"pids.max", procs}}
	if c.version == 1 {
		settings = [][2]string{{"memory.limit_in_bytes", mem}, {"memory.memsw.limit_in_bytes", mem}}
	}
	for _, s := range settings {
		err := os.WriteFile(filepath.Join(c.memory, s[0]), []byte(s[1]), 0)
		if errors.Is(err, os.ErrNotExist) && (s[0] == "memory.swap.max" || s[0] == "memory.memsw.limit_in_bytes") {
			continue // no swap accounting: no swap to bound
		}
		if err != nil {
			return c, fmt.Errorf("set %s: %w", s[0], err)
		}
	}
	if p.pids != "" {
		if c.pids, err = os.MkdirTemp(p.pids, prefix); err != nil {
			return c, err
		}
		if err := os.WriteFile(filepath.Join(c.pids, "pids.max"), []byte(procs), 0); err != nil {
			return c, fmt.Errorf("set pids.max: %w", err)
		}
	}
	return c, nil
}

// runCgroupFor makes the cgroup of a run of cfg, nil (a valid *runCgroup
// that does nothing) for a probe and where there is no cgroup to make.
func runCgroupFor(cfg initConfig) (*runCgroup, error) {
	if cfg.Probe {
		return nil, nil
	}
	p, err := findCgroup()
	if err != nil {
		return nil, nil // the rlimits alone; TotalLimits says so
	}
	c, err := newRunCgroup(p, cfg.Limits)
	if err != nil {
		return nil, &UnavailableError{Step: "make the run's " + p.String() + " group", Err: err}
	}
	return c, nil
}

// outcome is Run's error err, made a *MemoryLimitError when the kernel
// killed processes of the run for memory.
func (c *runCgroup) outcome(err error) error {
	if c == nil {
		return err
	}
	if n := c.oomKills(); n > 0 {
		return &MemoryLimitError{Limit: c.memoryLimit, Killed: n, Peak: c.peak(), Err: err}
	}
	return err
}

// add moves process pid (all its threads) into the run's cgroup.
func (c *runCgroup) add(pid int) error {
	if c == nil {
		return nil
	}
	for _, d := range []string{c.memory, c.pids} {
		if d == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return err
		}
	}
	return nil
}

// oomKills is how many of the run's processes the kernel killed for
// memory.
func (c *runCgroup) oomKills() int {
	file := "memory.events"
	if c.version == 1 {
		file = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(c.memory, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// peak is the most memory the run's processes used together, 0 when the
// kernel does not say (v2 before Linux 5.19).
func (c *runCgroup) peak() uint64 {
	file := "memory.peak"
	if c.version == 1 {
		file = "memory.max_usage_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(c.memory, file))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// remove deletes the run's cgroups once the run has ended. The processes of
// an ended PID namespace are gone when its init has been waited for, but
// the kernel may release their cgroup a moment later: a bounded number of
// retries covers that.
func (c *runCgroup) remove() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, d := range []string{c.memory, c.pids} {
		if d == "" {
			continue
		}
		var err error
		for attempt := 1; attempt <= 50; attempt++ {
			if err = syscall.Rmdir(d); err != syscall.EBUSY {
				break
			}
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
		if err != nil && err != syscall.ENOENT {
			errs = append(errs, fmt.Errorf("remove the run's cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
