package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// arch is one way to run the adversary: natively or under qemu-user.
type arch struct {
	goarch, emulator string
}

// arches lists the native architecture and arm64 under qemu.
func arches(t *testing.T) []arch {
	if runtime.GOARCH != "amd64" {
		t.Skip("the tests' native adversary is amd64")
	}
	return []arch{{goarch: "amd64"}, {goarch: "arm64", emulator: testkit.Tool(t, "qemu-aarch64-static")}}
}

// imageRoot makes an unpacked image owned by Owner(): /etc, and the
// adversary at /usr/bin/NAME for each name.
func imageRoot(t *testing.T, goarch string, names ...string) string {
	t.Helper()
	bin, err := os.ReadFile(adversaries[goarch])
	require.NoError(t, err)
	root := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(root, "usr", "bin", n), bin, 0o755))
	}
	uid, gid := Owner()
	require.NoError(t, filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}))
	return root
}

// tree lists every path under root, to compare before and after runs.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		out = append(out, p)
		return err
	}))
	return out
}

// facts parses the inspect program's key=value lines.
func facts(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestIsolation(t *testing.T) {
	for _, a := range arches(t) {
		t.Run(a.goarch, func(t *testing.T) {
			root := imageRoot(t, a.goarch, "inspect")
			before := tree(t, root)
			lim := Limits{CPU: 1500 * time.Millisecond, AddressSpace: 6 << 30, Processes: 50, FileSize: 1 << 20, OpenFiles: 64}
			env := []string{"PATH=/usr/bin:/bin", "FROM_IMAGE=1"}
			for run := 1; run <= 2; run++ {
				var out bytes.Buffer
				err := (&Runner{}).Run(context.Background(), Spec{Root: root, Path: "/usr/bin/inspect", Args: []string{"a", "b c"},
					Env: env, Emulator: a.emulator, Limits: lim, Stdout: &out, Stderr: &out})
				require.NoError(t, err, out.String())
				f := facts(out.String())
				assert.Equal(t, "0", f["uid"], "root inside")
				assert.Equal(t, "0", f["gid"])
				if privileged() {
					assert.Equal(t, fmt.Sprintf("0 %d %d", OutsideID, MappedIDs), f["uid_map"], "root inside is OutsideID outside, uid n OutsideID+n")
					assert.Equal(t, "[]", f["groups"], "no supplementary groups of the caller")
				}
				assert.Equal(t, "sandbox", f["hostname"])
				assert.Equal(t, "lo(true)", f["interfaces"], "only loopback, up")
				if a.emulator == "" {
					// qemu-user is the process the kernel sees; it shows the guest its own pid view.
					assert.Equal(t, "1", f["pid"], "the program is PID 1 of its namespace")
				}
				assert.Equal(t, "1", f["processes"], "no other process is visible")
				assert.Equal(t, "0,1,2", f["fds"], "nothing but stdin, stdout and stderr is inherited")
				gotEnv := strings.Split(f["env"], ",")
				sort.Strings(gotEnv) // qemu-user reorders it
				assert.Equal(t, []string{"FROM_IMAGE=1", "PATH=/usr/bin:/bin"}, gotEnv, "exactly the given environment")
				assert.Equal(t, "2", f["rlimit_cpu"], "CPU seconds, rounded up")
				if a.emulator == "" {
					assert.Equal(t, fmt.Sprint(6<<30), f["rlimit_as"])
				}
				assert.Equal(t, "50", f["rlimit_nproc"])
				assert.Equal(t, fmt.Sprint(1<<20), f["rlimit_fsize"])
				assert.Equal(t, "64", f["rlimit_nofile"])
				assert.Equal(t, "1", f["no_new_privs"])
				assert.Equal(t, "/", f["cwd"])
				assert.Equal(t, "/usr/bin/inspect a b c", f["argv"])
				assert.Equal(t, "ok", f["write_root"], "the root is writable")
				assert.Equal(t, "ok", f["write_tmp"])
				assert.Equal(t, "ok", f["dev_null"])
				assert.Equal(t, "false", f["left_by_last_run"], "run %d sees nothing an earlier run wrote", run)
				if a.emulator == "" {
					assert.Equal(t, "none", f["emulator_mount"])
				} else {
					assert.Regexp(t, `^ro,`, f["emulator_mount"], "the emulator is mounted read-only")
				}
			}
			assert.Equal(t, before, tree(t, root), "the image's directory is never written")
		})
	}
}

func TestHostUnreachable(t *testing.T) {
	for _, a := range arches(t) {
		t.Run(a.goarch, func(t *testing.T) {
			watch := filepath.Join(t.TempDir(), "watched")
			require.NoError(t, os.Mkdir(watch, 0o777))
			hostFile := filepath.Join(watch, "escaped")
			canary := filepath.Join(t.TempDir(), "canary")
			secret := "canary-" + a.goarch + "-" + filepath.Base(watch)
			require.NoError(t, os.WriteFile(canary, []byte(secret), 0o644))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			env := []string{"HOST_FILE=" + hostFile, "CANARY_FILE=" + canary, "DIAL_ADDR=" + ln.Addr().String()}

			root := imageRoot(t, a.goarch, "write-host-file", "read-canary", "dial-host")
			want := map[string]string{
				"write-host-file": "write-host-file: write " + hostFile + ": done", // inside its own overlay
				"read-canary":     "read-canary: read canary: open " + canary + ": no such file or directory",
				"dial-host":       "dial-host: dial " + ln.Addr().String() + ": dial tcp " + ln.Addr().String() + ": connect: connection refused",
			}
			for name, line := range want {
				var out bytes.Buffer
				err := (&Runner{}).Run(context.Background(), Spec{Root: root, Path: "/usr/bin/" + name, Env: env, Emulator: a.emulator, Stdout: &out, Stderr: &out})
				var exit *exec.ExitError
				require.ErrorAs(t, err, &exit, out.String())
				assert.Equal(t, 1, exit.ExitCode())
				assert.Equal(t, line, strings.TrimSpace(out.String()))
				assert.NotContains(t, out.String(), secret)
			}
			assert.NoFileExists(t, hostFile, "nothing written on the host")
			entries, err := os.ReadDir(watch)
			require.NoError(t, err)
			assert.Empty(t, entries)
			// Whatever connected would be queued by now: every process of the runs has ended.
			require.NoError(t, ln.(*net.TCPListener).SetDeadline(time.Now()))
			c, err := ln.Accept()
			if err == nil {
				c.Close()
			}
			assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the listener on the host's loopback saw no connection")
		})
	}
}

// cancelOn is an output sink that ends a run once the output holds want.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf.Len() < 1<<16 {
		c.buf.Write(p)
	}
	if strings.Contains(c.buf.String(), c.want) {
		c.cancel()
	}
	return len(p), nil
}

func TestEverythingEndsWithTheRun(t *testing.T) {
	for _, a := range arches(t) {
		t.Run(a.goarch, func(t *testing.T) {
			root := imageRoot(t, a.goarch, "fork-bomb", "print-forever", "sleep-forever")
			tests := []struct{ name, waitFor string }{
				{"fork-bomb", "fork refused"}, // the process limit held
				{"print-forever", "yyyy\n"},
				{"sleep-forever", "sleeping"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					// The bound only stops a broken test; the run ends on the event.
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					defer cancel()
					out := &cancelOn{want: tt.waitFor, cancel: cancel}
					tr := &sandboxtest.Tracker{}
					r := &Runner{Started: tr.Started}
					err := r.Run(ctx, Spec{Root: root, Path: "/usr/bin/" + tt.name, Emulator: a.emulator,
						Limits: Limits{Processes: 32}, Stdout: out, Stderr: out})
					var exit *exec.ExitError
					require.ErrorAs(t, err, &exit, out.buf.String())
					assert.Equal(t, "signal: killed", exit.Error())
					require.ErrorIs(t, ctx.Err(), context.Canceled, "ended by the test, not by the bound")
					assert.Equal(t, 1, tr.Count())
					assert.Empty(t, tr.Leftovers(), "nothing of the sandbox is left")
				})
			}
		})
	}
}

func TestExecError(t *testing.T) {
	root := imageRoot(t, "amd64")
	err := (&Runner{}).Run(context.Background(), Spec{Root: root, Path: "/usr/bin/missing"})
	var ee *ExecError
	require.ErrorAs(t, err, &ee)
	assert.EqualError(t, err, "exec /usr/bin/missing: no such file or directory (the file or its ELF interpreter is missing)")
}

func TestProbe(t *testing.T) {
	if sandboxtest.Denied(os.Environ()) {
		err := (&Runner{}).Probe(context.Background(), t.TempDir())
		require.ErrorIs(t, err, ErrUnavailable)
		var ue *UnavailableError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, "create namespaces", ue.Step)
		assert.NotContains(t, err.Error(), "\n", "one line")
		assert.Contains(t, err.Error(), "no sandbox for the image's programs (create namespaces: fork/exec /proc/self/exe: no space left on device: the user namespace limit is 0 or used up), so nothing was run: allow user namespaces")
		root := imageRoot(t, "amd64", "write-host-file")
		err = (&Runner{}).Run(context.Background(), Spec{Root: root, Path: "/usr/bin/write-host-file", Env: []string{"HOST_FILE=" + filepath.Join(t.TempDir(), "x")}})
		require.ErrorIs(t, err, ErrUnavailable, "no fallback to running it unsandboxed")
		return
	}
	require.NoError(t, (&Runner{}).Probe(context.Background(), t.TempDir()))
	sandboxtest.RunWithoutUserNamespaces(t, os.Environ())
}

func TestOutcomeWithoutReport(t *testing.T) {
	err := outcome(context.Background(), initConfig{Path: "/x"}, nil, nil, errors.New("exit status 2"))
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorContains(t, err, "must call sandbox.Init")
}

// parentEnv holds, in the test binary TestParentDeathEndsTheSandbox
// starts, the image root its sandbox runs over.
const parentEnv = "SANDBOX_TEST_PARENT_ROOT"

// When the process that started a sandbox dies, the sandbox dies with it.
func TestParentDeathEndsTheSandbox(t *testing.T) {
	if root := os.Getenv(parentEnv); root != "" {
		// The parent: start a sandbox that never ends, say where it is, and
		// wait to be killed (so nothing of its own to clean up).
		r := &Runner{Started: func(pid int) { fmt.Printf("pid=%d\n", pid) }}
		err := r.Run(context.Background(), Spec{Root: root, Path: "/usr/bin/sleep-forever", Stdout: os.Stdout})
		t.Fatalf("the sandbox ended: %v", err)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	parent := exec.Command(self, "-test.run=^TestParentDeathEndsTheSandbox$", "-test.count=1")
	parent.Env = append(os.Environ(), parentEnv+"="+imageRoot(t, "amd64", "sleep-forever"))
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	defer parent.Process.Kill()
	sc := bufio.NewScanner(out)
	pid := 0
	for sc.Scan() && !strings.Contains(sc.Text(), "sleeping") {
		fmt.Sscanf(sc.Text(), "pid=%d", &pid)
	}
	require.NotZero(t, pid, "the parent said where its sandbox is")
	pidfd, err := unix.PidfdOpen(pid, 0)
	require.NoError(t, err, "the sandbox runs")
	defer unix.Close(pidfd)

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()
	// The bound only stops a broken test: the kernel kills the sandbox at once.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int((2 * time.Minute).Milliseconds()))
	require.NoError(t, err)
	if !assert.Equal(t, 1, n, "the sandbox ended with its parent") {
		_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
	}
}
