//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// binfmt_misc entries make the kernel start foreign-architecture ELF files through QEMU, so
// runc inside containerd can run an arm64 image's /bin/sh. The entries are kernel-wide and
// outlive the process that wrote them, and suites may run at the same time (two checkouts,
// scripts/fresh-check.sh's namespace beside a developer's run): a suite that found a handler
// another suite registered must keep it until it is done, whenever the other one ends.
//
// So suites share the handlers they register, coordinated through binfmtStateDir:
//   - "lock" is held exclusively while a suite registers handlers or lets go of them, so
//     those steps never interleave;
//   - "users" is held shared by every suite from registration to teardown (a flock: a
//     suite that dies lets go with its last file descriptor);
//   - "owned" lists the handlers suites registered (one name a line), "mounted" exists if a
//     suite mounted binfmt_misc.
//
// The suite that lets go last (it can then lock "users" exclusively) removes the handlers
// in "owned" and unmounts binfmt_misc if a suite mounted it and nothing is registered. A
// handler the suites did not register is never removed; a crashed suite's stay in "owned"
// and go with the next run's last suite.

const binfmtDir = "/proc/sys/fs/binfmt_misc"

// binfmtStateDir is on /dev/shm: a tmpfs emptied at boot as binfmt_misc is, and the same
// directory in scripts/fresh-check.sh's namespace (it binds the host's /dev), whose suite
// shares the host's binfmt_misc.
const binfmtStateDir = "/dev/shm/helperbuild-e2e-binfmt"

// binfmtKernel is binfmt_misc: procBinfmt, or a fake in the harness's own test.
type binfmtKernel interface {
	// mount mounts binfmt_misc if it is not mounted, saying whether it did.
	mount() (bool, error)
	registered(handler string) bool
	register(handler string) error
	remove(handler string) error
	// unmountIfEmpty unmounts binfmt_misc if no handler is registered.
	unmountIfEmpty() error
}

// binfmtUse is one suite's hold on the shared handlers.
type binfmtUse struct {
	kernel binfmtKernel
	dir    string
	users  *os.File // locked shared until release
	added  []string // handlers this suite registered
}

// acquireBinfmt registers the QEMU handlers among names ("aarch64", ...) that are missing
// and holds all of them until release. Each one it registers is recorded in "owned" right
// away, so a crash leaves it to the next run's last suite.
func acquireBinfmt(k binfmtKernel, dir string, names []string) (*binfmtUse, error) {
	unlock, err := lockBinfmtState(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	users, err := os.OpenFile(filepath.Join(dir, "users"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(users.Fd()), syscall.LOCK_SH); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s shared: %w", users.Name(), err), users.Close())
	}
	u := &binfmtUse{kernel: k, dir: dir, users: users}
	mounted, err := k.mount()
	if err != nil {
		return u, err
	}
	if mounted {
		if err := os.WriteFile(filepath.Join(dir, "mounted"), nil, 0o600); err != nil {
			return u, err
		}
	}
	for _, name := range names {
		handler := "qemu-" + name
		if k.registered(handler) {
			continue // registered by another suite or by the system: share it
		}
		if err := k.register(handler); err != nil {
			return u, err
		}
		u.added = append(u.added, handler)
		if err := ownBinfmt(dir, []string{handler}); err != nil {
			return u, err
		}
	}
	return u, nil
}

// release lets go of the handlers; the last suite to do so removes the ones suites
// registered.
func (u *binfmtUse) release() error {
	unlock, err := lockBinfmtState(u.dir)
	if err != nil {
		return err
	}
	defer unlock()
	if err := u.users.Close(); err != nil { // our shared lock goes with it
		return err
	}
	probe, err := os.OpenFile(filepath.Join(u.dir, "users"), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer probe.Close()
	if err := syscall.Flock(int(probe.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // another suite still uses them: it removes them
		}
		return fmt.Errorf("lock %s: %w", probe.Name(), err)
	}
	owned, err := os.ReadFile(filepath.Join(u.dir, "owned"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var errs []error
	for _, h := range strings.Fields(string(owned)) {
		errs = append(errs, u.kernel.remove(h))
	}
	if errors.Join(errs...) == nil {
		errs = append(errs, removeIfExists(filepath.Join(u.dir, "owned")))
	}
	if _, err := os.Stat(filepath.Join(u.dir, "mounted")); err == nil {
		errs = append(errs, u.kernel.unmountIfEmpty(), removeIfExists(filepath.Join(u.dir, "mounted")))
	}
	return errors.Join(errs...)
}

// ownBinfmt adds handlers to the list the last suite removes; the caller holds the lock.
func ownBinfmt(dir string, handlers []string) error {
	f, err := os.OpenFile(filepath.Join(dir, "owned"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	for _, h := range handlers {
		if _, err := fmt.Fprintln(f, h); err != nil {
			return errors.Join(err, f.Close())
		}
	}
	return f.Close()
}

// adoptBinfmt hands a crashed run's handlers (recorded by an earlier harness in its work
// directory) to the shared list, instead of removing them under a suite that uses them.
func adoptBinfmt(dir string, handlers []string) error {
	unlock, err := lockBinfmtState(dir)
	if err != nil {
		return err
	}
	defer unlock()
	owned, err := os.ReadFile(filepath.Join(dir, "owned"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	listed := strings.Fields(string(owned))
	return ownBinfmt(dir, slices.DeleteFunc(slices.Clone(handlers), func(h string) bool { return slices.Contains(listed, h) }))
}

// lockBinfmtState makes dir and holds its "lock" exclusively until unlock is called.
func lockBinfmtState(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", f.Name(), err), f.Close())
	}
	return func() { f.Close() }, nil // closing the last descriptor unlocks
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// procBinfmt is the kernel's binfmt_misc at binfmtDir, with the descriptions
// qemu-user-static ships in /usr/lib/binfmt.d.
type procBinfmt struct{}

func (procBinfmt) mount() (bool, error) {
	if _, err := os.Stat(filepath.Join(binfmtDir, "register")); err == nil {
		return false, nil
	}
	if err := syscall.Mount("binfmt_misc", binfmtDir, "binfmt_misc", 0, ""); err != nil {
		return false, fmt.Errorf("mount binfmt_misc on %s: %w", binfmtDir, err)
	}
	return true, nil
}

func (procBinfmt) registered(handler string) bool {
	_, err := os.Stat(filepath.Join(binfmtDir, handler))
	return err == nil
}

func (procBinfmt) register(handler string) error {
	conf := filepath.Join("/usr/lib/binfmt.d", handler+".conf")
	desc, err := os.ReadFile(conf)
	if err != nil {
		return fmt.Errorf("binfmt description for %s (qemu-user-static): %w", handler, err)
	}
	if err := os.WriteFile(filepath.Join(binfmtDir, "register"), desc, 0); err != nil {
		return fmt.Errorf("register %s from %s: %w", handler, conf, err)
	}
	return nil
}

// remove removes one handler if it is registered.
func (procBinfmt) remove(handler string) error {
	path := filepath.Join(binfmtDir, handler)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if err := os.WriteFile(path, []byte("-1"), 0); err != nil {
		return fmt.Errorf("unregister binfmt handler %s: %w", handler, err)
	}
	return nil
}

func (procBinfmt) unmountIfEmpty() error {
	entries, err := os.ReadDir(binfmtDir)
	if err != nil || len(entries) > 2 { // only "register" and "status" when empty
		return nil
	}
	return syscall.Unmount(binfmtDir, 0)
}
