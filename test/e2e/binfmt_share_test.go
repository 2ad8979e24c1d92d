//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// fakeBinfmt is binfmt_misc as a set of handler names, for the sharing rules alone.
type fakeBinfmt struct {
	mu        sync.Mutex
	mounted   bool
	handlers  map[string]bool
	unmounted bool
}

func (f *fakeBinfmt) mount() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mounted {
		return false, nil
	}
	f.mounted = true
	return true, nil
}

func (f *fakeBinfmt) registered(h string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handlers[h]
}

func (f *fakeBinfmt) register(h string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[h] = true
	return nil
}

func (f *fakeBinfmt) remove(h string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.handlers, h)
	return nil
}

func (f *fakeBinfmt) unmountIfEmpty() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.handlers) == 0 {
		f.mounted, f.unmounted = false, true
	}
	return nil
}

func (f *fakeBinfmt) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for h := range f.handlers {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// TestBinfmtSharingRules: suites share the handlers; the last one to let go removes those
// suites registered (a crashed suite's included) and nothing else.
func TestBinfmtSharingRules(t *testing.T) {
	s := suiteFor(t)
	s.step(t, "a suite that found the handlers keeps them when the one that registered them ends", func(t *testing.T) {
		k := &fakeBinfmt{handlers: map[string]bool{"qemu-mips": true}} // the system's
		dir := t.TempDir()
		a, err := acquireBinfmt(k, dir, []string{"aarch64", "mips"})
		require.NoError(t, err)
		assert.Equal(t, []string{"qemu-aarch64"}, a.added)
		b, err := acquireBinfmt(k, dir, []string{"aarch64", "s390x"})
		require.NoError(t, err)
		assert.Equal(t, []string{"qemu-s390x"}, b.added)

		require.NoError(t, a.release())
		assert.Equal(t, []string{"qemu-aarch64", "qemu-mips", "qemu-s390x"}, k.names(), "b still uses them")
		require.NoError(t, b.release())
		assert.Equal(t, []string{"qemu-mips"}, k.names(), "the last suite removed what suites registered, not the system's")
		assert.False(t, k.unmounted, "a handler is left: binfmt_misc stays mounted")
	})
	s.step(t, "a crashed suite's handlers go with the next run's last suite", func(t *testing.T) {
		k := &fakeBinfmt{handlers: map[string]bool{}}
		dir := t.TempDir()
		crashed, err := acquireBinfmt(k, dir, []string{"arm"})
		require.NoError(t, err)
		require.NoError(t, crashed.users.Close()) // its process died: the kernel drops its lock
		next, err := acquireBinfmt(k, dir, []string{"arm", "riscv64"})
		require.NoError(t, err)
		assert.Equal(t, []string{"qemu-riscv64"}, next.added)
		require.NoError(t, next.release())
		assert.Empty(t, k.names())
		assert.True(t, k.unmounted, "the crashed suite mounted binfmt_misc and nothing is left")
	})
	s.step(t, "an earlier harness's crashed run is adopted, not removed under a running suite", func(t *testing.T) {
		k := &fakeBinfmt{handlers: map[string]bool{"qemu-ppc64le": true}}
		dir := t.TempDir()
		running, err := acquireBinfmt(k, dir, []string{"ppc64le"})
		require.NoError(t, err)
		require.NoError(t, adoptBinfmt(dir, []string{"qemu-ppc64le"}))
		assert.Equal(t, []string{"qemu-ppc64le"}, k.names())
		require.NoError(t, running.release())
		assert.Empty(t, k.names())
		owned, err := os.ReadFile(filepath.Join(dir, "owned"))
		assert.ErrorIs(t, err, os.ErrNotExist, "owned: %q", owned)
	})
}

// TestBinfmtSharedBetweenSuites: on the real binfmt_misc, two more holders beside the
// suite; the one that registered a handler ends first, and the other still runs a program
// of that architecture through it.
func TestBinfmtSharedBetweenSuites(t *testing.T) {
	s := suiteFor(t)
	const arch, handler = "mips64el", "qemu-mips64el" // a handler the suite itself does not hold
	hello := filepath.Join(t.TempDir(), "hello-mips64le")
	s.mustStep(t, "build a mips64le program", func(t *testing.T) {
		require.NoError(t, os.WriteFile(hello, testkit.HelloBinary(t, os.Environ(), "mips64le"), 0o755))
	})
	s.step(t, "the second holder runs it after the first one ended", func(t *testing.T) {
		before := procBinfmt{}.registered(handler)
		first, err := acquireBinfmt(procBinfmt{}, binfmtStateDir, []string{arch})
		require.NoError(t, err)
		second, err := acquireBinfmt(procBinfmt{}, binfmtStateDir, []string{arch})
		require.NoError(t, err)
		defer func() { require.NoError(t, second.release()) }()
		if !before {
			assert.Equal(t, []string{handler}, first.added, "the first holder registered it")
			assert.Empty(t, second.added, "the second found it")
		}
		require.NoError(t, first.release())
		require.True(t, procBinfmt{}.registered(handler), "%s removed while the second holder uses it", handler)
		res := mustRun(t, command(t, os.Environ(), hello))
		assert.Equal(t, "OS/Arch: linux/mips64le", strings.TrimSpace(res.Stdout))
	})
}
