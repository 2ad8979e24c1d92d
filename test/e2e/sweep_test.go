//go:build e2e

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A run that dies without its teardown (kill -9, go test -timeout) leaves its work
// directory behind. Its daemons are already gone (Pdeathsig), but container shims and mounts
// may remain. Each run's work directory records the owner's PID; the next run sweeps work
// directories whose owner is gone. (binfmt_misc handlers are shared between suites and
// removed by the last one to end, crashed or not: binfmt_test.go.)

const (
	workDirPattern   = "helperbuild-e2e-*" // in os.TempDir()
	ownerFile        = "owner.pid"
	binfmtFile       = "binfmt-added"          // an earlier harness's handlers, one a line
	runDirsFile      = "run-containerd-before" // directories in /run/containerd before the run
	containerTaskDir = "containerd/state/io.containerd.runtime.v2.task"
)

// sweepStaleRuns cleans up after earlier runs that died; it returns what it removed.
func sweepStaleRuns() ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), workDirPattern))
	if err != nil {
		return nil, err
	}
	var swept []string
	var errs []error
	for _, dir := range dirs {
		owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not (yet) a work directory of ours: leave it
		}
		if ownerAlive(strings.TrimSpace(string(owner))) {
			continue
		}
		errs = append(errs, sweepWorkDir(dir))
		swept = append(swept, dir)
	}
	return swept, errors.Join(errs...)
}

// ownerID identifies this process for ownerFile: "PID STARTTIME", the start time (in clock
// ticks since boot) telling a reused PID from the original.
func ownerID() string {
	return strconv.Itoa(os.Getpid()) + " " + processStartTime(os.Getpid())
}

// ownerAlive reports whether the process an ownerFile names still runs. A zombie (killed,
// not yet reaped) is dead; a PID now used by another process is too.
func ownerAlive(owner string) bool {
	fields := strings.Fields(owner)
	if len(fields) != 2 {
		return false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", fields[0], "stat"))
	if err != nil {
		return false
	}
	state, start := statFields(stat)
	return pid > 0 && state != "Z" && state != "X" && start == fields[1]
}

// processStartTime returns field 22 of /proc/PID/stat (start time), or "" if unknown.
func processStartTime(pid int) string {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	_, start := statFields(stat)
	return start
}

// statFields returns the state (field 3) and start time (field 22) of a /proc/PID/stat
// line. The command name (field 2) may contain spaces, so fields count from its ")".
func statFields(stat []byte) (state, start string) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", ""
	}
	rest := strings.Fields(string(stat[i+1:])) // rest[0] is field 3
	if len(rest) < 20 {
		return "", ""
	}
	return rest[0], rest[19]
}

// sweepWorkDir kills the containers and processes still referring to dir (container
// shims started with a socket in it), unmounts what is mounted below it, removes what its
// run left in /run/containerd and binfmt_misc, and deletes it.
func sweepWorkDir(dir string) error {
	var errs []error
	containers := staleContainers(dir)
	for _, c := range containers {
		errs = append(errs, killStaleContainer(dir, c))
	}
	for _, pid := range processesMentioning(dir) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill stale pid %d: %w", pid, err))
		}
	}
	errs = append(errs, unmountBelow(dir))

	// containerd's runc state and I/O fifos of those containers, then the empty
	// directories the run created in /run/containerd.
	for _, c := range containers {
		errs = append(errs, os.RemoveAll(filepath.Join(runContainerd, "runc", c.namespace, c.id)))
		fifos, _ := filepath.Glob(filepath.Join(runContainerd, "fifo", "*", c.id+"-std*"))
		for _, f := range fifos {
			errs = append(errs, os.Remove(f))
		}
		// The shim's socket, named as containerd 1.6 names it (runtime/v2/shim.SocketAddress).
		address := filepath.Join(dir, "containerd", "containerd.sock")
		socket := fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Join(address, c.namespace, c.id))))
		if err := os.Remove(filepath.Join(runContainerd, "s", socket)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if before, err := os.ReadFile(filepath.Join(dir, runDirsFile)); err == nil {
		existed := map[string]bool{}
		for _, d := range strings.Split(string(before), "\n") {
			existed[d] = true
		}
		errs = append(errs, removeNewEmptyDirs(runContainerd, existed))
	}

	// An earlier harness recorded its handlers here; another suite may use them now, so
	// they join the shared list that the last suite to end removes (binfmt_test.go).
	if handlers, err := os.ReadFile(filepath.Join(dir, binfmtFile)); err == nil {
		errs = append(errs, adoptBinfmt(binfmtStateDir, strings.Fields(string(handlers))))
	}
	errs = append(errs, os.RemoveAll(dir))
	return errors.Join(errs...)
}

// staleContainer is a container a dead run's containerd had created.
type staleContainer struct{ namespace, id string }

// staleContainers lists the task bundles in the work directory's containerd state.
func staleContainers(dir string) []staleContainer {
	bundles, _ := filepath.Glob(filepath.Join(dir, containerTaskDir, "*", "*"))
	out := make([]staleContainer, 0, len(bundles))
	for _, b := range bundles {
		out = append(out, staleContainer{namespace: filepath.Base(filepath.Dir(b)), id: filepath.Base(b)})
	}
	return out
}

// killStaleContainer kills the init process of a container left running, found through
// runc's state; killing a PID namespace's init ends every process in it. The state must
// name dir, so nothing of another containerd is touched.
func killStaleContainer(dir string, c staleContainer) error {
	raw, err := os.ReadFile(filepath.Join(runContainerd, "runc", c.namespace, c.id, "state.json"))
	if err != nil || !bytes.Contains(raw, []byte(dir+"/")) {
		return nil
	}
	var state struct {
		InitProcessPid int `json:"init_process_pid"`
	}
	if err := json.Unmarshal(raw, &state); err != nil || state.InitProcessPid <= 1 {
		return nil
	}
	if err := syscall.Kill(state.InitProcessPid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill container %s/%s (pid %d): %w", c.namespace, c.id, state.InitProcessPid, err)
	}
	return nil
}

// processesMentioning returns the PIDs whose command line contains dir: a path unique to
// one run, so this finds exactly that run's leftovers.
func processesMentioning(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && (bytes.Contains(cmdline, []byte(dir+"/")) || bytes.Contains(cmdline, []byte(dir+"\x00"))) {
			pids = append(pids, pid)
		}
	}
	return pids
}
