//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// binfmt_misc entries make the kernel start foreign-architecture ELF files through QEMU, so
// runc inside containerd can run an arm64 image's /bin/sh. The entries are kernel-wide and
// outlive the process that wrote them: the suite registers only the handlers that are
// missing, remembers exactly those, and removes exactly those at the end.

const binfmtDir = "/proc/sys/fs/binfmt_misc"

// binfmt records what the suite changed in binfmt_misc.
type binfmt struct {
	mounted bool     // the suite mounted binfmt_misc itself
	added   []string // handler names ("qemu-aarch64") the suite registered
}

// registerBinfmt mounts binfmt_misc if needed and registers the QEMU handlers among names
// ("aarch64", ...) that are not registered yet, using the descriptions qemu-user-static
// ships in /usr/lib/binfmt.d. record is called with each handler right after it is added,
// so a crashed run's handlers can be found by the next run's sweep.
func registerBinfmt(names []string, record func(handler string) error) (*binfmt, error) {
	b := &binfmt{}
	if _, err := os.Stat(filepath.Join(binfmtDir, "register")); err != nil {
		if err := syscall.Mount("binfmt_misc", binfmtDir, "binfmt_misc", 0, ""); err != nil {
			return nil, fmt.Errorf("mount binfmt_misc on %s: %w", binfmtDir, err)
		}
		b.mounted = true
	}
	for _, name := range names {
		handler := "qemu-" + name
		if _, err := os.Stat(filepath.Join(binfmtDir, handler)); err == nil {
			continue // registered by someone else: leave it alone
		}
		conf := filepath.Join("/usr/lib/binfmt.d", handler+".conf")
		desc, err := os.ReadFile(conf)
		if err != nil {
			return b, fmt.Errorf("binfmt description for %s (qemu-user-static): %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(binfmtDir, "register"), desc, 0); err != nil {
			return b, fmt.Errorf("register %s from %s: %w", handler, conf, err)
		}
		b.added = append(b.added, handler)
		if err := record(handler); err != nil {
			return b, err
		}
	}
	return b, nil
}

// unregister removes the handlers the suite added and unmounts binfmt_misc if the suite
// mounted it and nothing else is registered there now.
func (b *binfmt) unregister() error {
	var errs []error
	for _, handler := range b.added {
		errs = append(errs, removeBinfmtHandler(handler))
	}
	if b.mounted {
		entries, err := os.ReadDir(binfmtDir)
		if err == nil && len(entries) <= 2 { // only "register" and "status" are left
			errs = append(errs, syscall.Unmount(binfmtDir, 0))
		}
	}
	return errors.Join(errs...)
}

// removeBinfmtHandler removes one binfmt_misc handler if it is registered.
func removeBinfmtHandler(handler string) error {
	path := filepath.Join(binfmtDir, handler)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if err := os.WriteFile(path, []byte("-1"), 0); err != nil {
		return fmt.Errorf("unregister binfmt handler %s: %w", handler, err)
	}
	return nil
}
