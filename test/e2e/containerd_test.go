//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// containerd is a private containerd: its root, state and sockets live in a directory of
// the suite, so it shares nothing with a containerd the machine may already run, except
// /run/containerd, which containerd 1.6 always uses for shim sockets and runc state.
type containerd struct {
	dir     string
	Address string // gRPC socket: CONTAINERD_ADDRESS for ctr
	d       *daemon
	// runDirsBefore are the directories under /run/containerd that existed before start;
	// stop removes the empty ones it finds beyond these.
	runDirsBefore map[string]bool
}

const runContainerd = "/run/containerd"

// startContainerd writes a config and starts containerd in dir (created).
func startContainerd(dir string) (*containerd, error) {
	c := &containerd{dir: dir, Address: filepath.Join(dir, "containerd.sock"), runDirsBefore: listDirs(runContainerd)}
	for _, sub := range []string{"root", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o711); err != nil {
			return nil, err
		}
	}
	// CRI is what a kubelet talks to; ctr does not need it and it wants a CNI set-up.
	// The "opt" plugin would create /opt/containerd; tracing needs nothing here.
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = [
  "io.containerd.grpc.v1.cri",
  "io.containerd.internal.v1.opt",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  level = "warn"
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.Address, c.Address+".ttrpc")
	configFile := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return nil, err
	}
	var err error
	c.d, err = startDaemon("containerd", filepath.Join(dir, "containerd.log"), os.Environ(),
		"containerd", "--config", configFile)
	if err != nil {
		return nil, err
	}
	err = c.d.pollUntil(200, 50*time.Millisecond, func() (bool, error) {
		out, err := c.ctrCommand("default", "version").CombinedOutput()
		if err != nil {
			return false, fmt.Errorf("ctr version: %v: %s", err, strings.TrimSpace(string(out)))
		}
		return true, nil
	})
	if err != nil {
		_ = c.d.stop(5 * time.Second)
		return nil, err
	}
	return c, nil
}

// env is the environment for ctr: the private socket and the namespace.
func (c *containerd) env(namespace string) []string {
	return append(os.Environ(), "CONTAINERD_ADDRESS="+c.Address, "CONTAINERD_NAMESPACE="+namespace)
}

// ctrCommand prepares a ctr invocation outside of a test (set-up and teardown).
func (c *containerd) ctrCommand(namespace string, args ...string) *exec.Cmd {
	cmd := exec.Command("ctr", args...)
	cmd.Env = c.env(namespace)
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// ctr prepares a ctr invocation in namespace for a test. Use a fresh namespace per test
// case: images, content and containers are all per namespace in containerd.
func (c *containerd) ctr(t testing.TB, namespace string, args ...string) *exec.Cmd {
	t.Helper()
	return command(t, c.env(namespace), append([]string{"ctr"}, args...)...)
}

// stop kills and deletes every task and container in every namespace, stops containerd,
// unmounts whatever is left mounted below its directory and removes the empty directories
// it left in /run/containerd.
func (c *containerd) stop() error {
	var errs []error
	if c.d.running() {
		errs = append(errs, c.deleteContainers())
	}
	errs = append(errs, c.d.stop(15*time.Second))
	errs = append(errs, unmountBelow(c.dir))
	errs = append(errs, removeNewEmptyDirs(runContainerd, c.runDirsBefore))
	return errors.Join(errs...)
}

// deleteContainers kills and deletes all tasks and containers, namespace by namespace.
func (c *containerd) deleteContainers() error {
	lines := func(namespace string, args ...string) []string {
		out, err := c.ctrCommand(namespace, args...).Output()
		if err != nil {
			return nil
		}
		return strings.Fields(string(out))
	}
	var errs []error
	for _, ns := range lines("default", "namespaces", "ls", "-q") {
		for _, task := range lines(ns, "tasks", "ls", "-q") {
			_ = c.ctrCommand(ns, "tasks", "kill", "-a", "-s", "SIGKILL", task).Run()
			if out, err := c.ctrCommand(ns, "tasks", "delete", "-f", task).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("delete task %s/%s: %v: %s", ns, task, err, out))
			}
		}
		for _, ctr := range lines(ns, "containers", "ls", "-q") {
			if out, err := c.ctrCommand(ns, "containers", "delete", ctr).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("delete container %s/%s: %v: %s", ns, ctr, err, out))
			}
		}
	}
	return errors.Join(errs...)
}

// listDirs returns every directory below (and including) root; empty if root is absent.
func listDirs(root string) map[string]bool {
	dirs := map[string]bool{}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs[path] = true
		}
		return nil
	})
	return dirs
}

// removeNewEmptyDirs removes, deepest first, the empty directories below (and including)
// root that are not in before.
func removeNewEmptyDirs(root string, before map[string]bool) error {
	var dirs []string
	for dir := range listDirs(root) {
		if !before[dir] {
			dirs = append(dirs, dir)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // children sort after their parents
	var errs []error
	for _, dir := range dirs {
		if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// unmountBelow unmounts every mount point at or below dir, deepest first.
func unmountBelow(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	for _, mp := range points {
		if err := syscall.Unmount(mp, 0); err != nil {
			if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unescapeMountinfo decodes the octal escapes (\040 for a space) of /proc/self/mountinfo.
func unescapeMountinfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			ok := true
			for _, c := range s[i+1 : i+4] {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + byte(c-'0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
