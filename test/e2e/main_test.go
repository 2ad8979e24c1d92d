//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Suite is the environment TestMain starts once and every test shares. Tests get it with
// suiteFor(t) and run their checks as s.step(t, "name", func(t *testing.T) {...}).
type Suite struct {
	work     string // this run's work directory in os.TempDir(); removed at the end
	repoRoot string // root of the helperbuild module

	helperbuildBin string // the binary under test, built once
	helperbuildErr error  // why it could not be built; tests that need it fail with this

	plain      *registry // http://localhost:PORT, no auth
	secure     *registry // https://localhost:PORT, htpasswd auth
	containerd *containerd
	base       *baseImage // busybox, five platforms, in an OCI layout and in both registries

	timings timings
	started time.Time

	teardownOnce sync.Once
	teardownErr  error
	undoMu       sync.Mutex
	undo         []undoStep // run in reverse order by teardown

	// Fixtures made by the first test that needs them (fixtures_test.go).
	example          lazy[string]
	plainHelperImage lazy[pushedImage]
	recipeReleased   lazy[pushedRecipe]
}

// undoStep reverts one set-up step.
type undoStep struct {
	name string
	fn   func() error
}

// suite is set by TestMain before any test runs. It is the package's only state: tests
// share one environment because starting it costs seconds.
var suite *Suite

// suiteFor returns the shared environment and records the test's total duration.
func suiteFor(t *testing.T) *Suite {
	t.Helper()
	if suite == nil {
		t.Fatal("the e2e environment is not set up (TestMain did not run)")
	}
	start := time.Now()
	t.Cleanup(func() { suite.timings.add(t.Name()+" (total)", time.Since(start), t.Failed()) })
	return suite
}

// step runs fn as the subtest name. Its duration goes into the phase table, and a panic in
// it tears the whole environment down before the panic ends the test binary.
func (s *Suite) step(t *testing.T, name string, fn func(t *testing.T)) bool {
	t.Helper()
	return t.Run(name, func(t *testing.T) {
		defer s.teardownOnPanic()
		start := time.Now()
		defer func() {
			took := time.Since(start)
			s.timings.add(t.Name(), took, t.Failed())
			t.Logf("step took %s", took.Round(time.Millisecond))
		}()
		fn(t)
	})
}

// mustStep is step, and stops the calling test if the step failed: for steps whose result
// later steps build on.
func (s *Suite) mustStep(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !s.step(t, name, fn) {
		t.FailNow()
	}
}

// teardownOnPanic must be deferred directly: it recovers a panic, tears everything down
// and panics again so the test still fails loudly.
func (s *Suite) teardownOnPanic() {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "panic: %v\n%s\ntearing the e2e environment down\n", r, debug.Stack())
		s.teardown()
		panic(r)
	}
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// runMain sets the environment up, runs the tests and tears the environment down on every
// path: normal end, failed set-up, a panic here, or SIGINT/SIGTERM.
func runMain(m *testing.M) (code int) {
	// Daemons started from this goroutine die with the process (Pdeathsig is per thread).
	runtime.LockOSThread()
	s := &Suite{started: time.Now()}
	defer func() { // code is the named result: a teardown failure fails the run
		if code != 0 {
			s.printDaemonLogs()
		}
		if s.teardown() != nil && code == 0 {
			code = 1
		}
		s.timings.print(os.Stderr, time.Since(s.started))
	}()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "\n%s: tearing the e2e environment down\n", sig)
		s.teardown()
		os.Exit(130)
	}()

	if err := s.setUp(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "e2e set-up: %v\n", err)
		return 1
	}
	suite = s
	return m.Run()
}

// printDaemonLogs shows the end of each daemon's log, for a failed run: they live in the
// work directory, which teardown removes.
func (s *Suite) printDaemonLogs() {
	var daemons []*daemon
	for _, r := range []*registry{s.plain, s.secure} {
		if r != nil {
			daemons = append(daemons, r.d)
		}
	}
	if s.containerd != nil {
		daemons = append(daemons, s.containerd.d)
	}
	for _, d := range daemons {
		fmt.Fprintf(os.Stderr, "\n=== last lines of the %s log (%s)\n%s\n", d.name, d.logPath, d.logTail())
	}
}

// logf prints set-up and teardown progress.
func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...) }

// onTeardown registers how to revert a set-up step; teardown runs them last-in first-out.
func (s *Suite) onTeardown(name string, fn func() error) {
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	s.undo = append(s.undo, undoStep{name, fn})
}

// teardown reverts every set-up step once, even if some fail, and reports all failures.
func (s *Suite) teardown() error {
	s.teardownOnce.Do(func() {
		s.undoMu.Lock() // a set-up step still running cannot register more
		defer s.undoMu.Unlock()
		var errs []error
		for i := len(s.undo) - 1; i >= 0; i-- {
			u := s.undo[i]
			errs = append(errs, s.timings.measure("teardown: "+u.name, logf, u.fn))
		}
		s.teardownErr = errors.Join(errs...)
	})
	return s.teardownErr
}

// setUp runs the set-up phases in order; helperbuild is compiled meanwhile.
func (s *Suite) setUp(ctx context.Context) error {
	phase := func(name string, fn func() error) error {
		return s.timings.measure(name, logf, fn)
	}
	if err := phase("check tools", checkTools); err != nil {
		return err
	}
	if err := phase("sweep stale runs", func() error {
		swept, err := sweepStaleRuns()
		for _, dir := range swept {
			logf("removed the leftovers of a crashed run: %s", dir)
		}
		return err
	}); err != nil {
		return err
	}
	if err := phase("work directory", s.makeWorkDir); err != nil {
		return err
	}

	// The first build of helperbuild can take a while; overlap it with the rest.
	built := make(chan struct{})
	go func() {
		defer close(built)
		// A failed build is not a set-up failure: tests of the infrastructure still run,
		// and every test that needs helperbuild fails with this error.
		_ = s.timings.measure("build helperbuild", logf, func() error {
			s.helperbuildErr = s.buildHelperbuild(ctx)
			return s.helperbuildErr
		})
	}()
	defer func() { <-built }()

	steps := []struct {
		name string
		fn   func() error
	}{
		{"start plain registry", s.startPlainRegistry},
		{"start TLS+htpasswd registry", s.startSecureRegistry},
		{"start containerd", s.startContainerd},
		{"register binfmt_misc handlers", s.registerBinfmt},
		{"build busybox base image", func() error { return s.buildBase(ctx) }},
		{"push base image with skopeo", func() error { return s.pushBase(ctx) }},
	}
	for _, st := range steps {
		if err := phase(st.name, st.fn); err != nil {
			return err
		}
	}
	return nil
}

// requiredTools are the programs the suite runs; scripts/install-test-deps.sh installs them.
var requiredTools = []string{"go", "git", "dpkg-deb", "docker-registry", "distribution-v3", "htpasswd", "skopeo",
	"containerd", "ctr", "runc", "umoci", "regctl", "qemu-aarch64-static", "qemu-arm-static",
	"qemu-ppc64le-static", "qemu-s390x-static", "qemu-riscv64-static", "cosign", "buildx"}

// checkTools fails unless the suite runs as root with every required tool on PATH.
func checkTools() error {
	var missing []string
	for _, tool := range requiredTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s: run scripts/install-test-deps.sh", strings.Join(missing, ", "))
	}
	if os.Geteuid() != 0 {
		return errors.New("the e2e suite must run as root (containerd, runc, binfmt_misc)")
	}
	return nil
}

// makeWorkDir creates this run's work directory and records the owner for the sweep.
func (s *Suite) makeWorkDir() error {
	dir, err := os.MkdirTemp("", strings.TrimSuffix(workDirPattern, "*"))
	if err != nil {
		return err
	}
	s.work = dir
	s.onTeardown("remove work directory", func() error {
		return errors.Join(unmountBelow(dir), os.RemoveAll(dir))
	})
	logf("work directory %s", dir)
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(ownerID()), 0o644)
}

// buildHelperbuild compiles cmd/helperbuild from the module root this test lives in.
func (s *Suite) buildHelperbuild(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return fmt.Errorf("locate the helperbuild module (go env GOMOD): %v", err)
	}
	s.repoRoot = filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(s.work, "bin", "helperbuild")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/helperbuild")
	cmd.Dir = s.repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/helperbuild in %s: %v\n%s", s.repoRoot, err, out)
	}
	s.helperbuildBin = bin
	return nil
}

func (s *Suite) startPlainRegistry() (err error) {
	s.plain, err = startRegistry(filepath.Join(s.work, "registry-plain"), "plain", false)
	if err == nil {
		s.onTeardown("stop plain registry", s.plain.stop)
		logf("plain registry at http://%s", s.plain.Host)
	}
	return err
}

func (s *Suite) startSecureRegistry() (err error) {
	s.secure, err = startRegistry(filepath.Join(s.work, "registry-tls"), "tls", true)
	if err == nil {
		s.onTeardown("stop TLS registry", s.secure.stop)
		logf("TLS registry at https://%s (user %s)", s.secure.Host, s.secure.User)
	}
	return err
}

func (s *Suite) startContainerd() (err error) {
	s.containerd, err = startContainerd(filepath.Join(s.work, "containerd"))
	if err == nil {
		// For the sweep, should this run die without its teardown.
		dirs := make([]string, 0, len(s.containerd.runDirsBefore))
		for d := range s.containerd.runDirsBefore {
			dirs = append(dirs, d)
		}
		if err := os.WriteFile(filepath.Join(s.work, runDirsFile), []byte(strings.Join(dirs, "\n")), 0o644); err != nil {
			return err
		}
		s.onTeardown("stop containerd", s.containerd.stop)
		logf("containerd at %s", s.containerd.Address)
	}
	return err
}

// registerBinfmt holds the QEMU handlers the suite needs, registering those that are
// missing, shared with any other suite running (binfmt_test.go).
func (s *Suite) registerBinfmt() error {
	u, err := acquireBinfmt(procBinfmt{}, binfmtStateDir, binfmtHandlers)
	if u != nil {
		s.onTeardown("let go of binfmt_misc handlers", u.release)
		logf("binfmt_misc handlers added: %v (the last suite to end removes them)", u.added)
	}
	return err
}

func (s *Suite) buildBase(ctx context.Context) (err error) {
	s.base, err = buildBaseImage(ctx, busyboxCacheDir(), filepath.Join(s.work, "base-oci"))
	if err == nil {
		logf("busybox base image %s", s.base.Digest)
	}
	return err
}

func (s *Suite) pushBase(ctx context.Context) error {
	for _, r := range []*registry{s.plain, s.secure} {
		if err := pushBase(ctx, s.base, r); err != nil {
			return err
		}
	}
	return nil
}

// lazy is a fixture made by the first test that needs it and shared with later tests. If
// making it fails, that test fails, and so does every later test that needs it.
type lazy[T any] struct {
	mu     sync.Mutex
	done   bool
	failed bool
	v      T
}

// get returns the fixture, making it with make(t) on first use.
func (l *lazy[T]) get(t *testing.T, name string, make func(t *testing.T) T) T {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed {
		t.Fatalf("fixture %q failed in an earlier test", name)
	}
	if !l.done {
		l.failed = true // stays true if make stops the test (t.Fatal)
		l.v = make(t)
		l.failed, l.done = false, true
	}
	return l.v
}
