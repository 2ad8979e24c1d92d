//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// mountRoot mounts a tmpfs of size bytes at stage and, at root inside it, an
// overlay of the image (the directory fd) under a directory of that tmpfs:
// the program may write anywhere, into memory this sandbox alone holds.
func mountRoot(stage, root string, fd int, size uint64) error {
	opts := "mode=0755,size=" + strconv.FormatUint(size, 10)
	if err := step("mount a tmpfs for the sandbox's writes", unix.Mount("tmpfs", stage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)); err != nil {
		return err
	}
	for _, d := range []string{"upper", "work", "root", "tmp"} {
		if err := step("make the sandbox's "+d+" directory", os.Mkdir(filepath.Join(stage, d), 0o755)); err != nil {
			return err
		}
	}
	if err := step("make the sandbox's tmp directory", os.Chmod(filepath.Join(stage, "tmp"), 0o1777)); err != nil {
		return err
	}
	ovl := fmt.Sprintf("lowerdir=/proc/self/fd/%d,upperdir=%s/upper,workdir=%s/work,userxattr", fd, stage, stage)
	return step("mount the image as an overlay", unix.Mount("overlay", root, "overlay", unix.MS_NOSUID|unix.MS_NODEV, ovl))
}

// mountSpecial provides /proc, /dev and /tmp in root.
func mountSpecial(stage, root string) error {
	for _, d := range []string{"proc", "dev", "tmp"} {
		if err := step("make /"+d, ensureDir(filepath.Join(root, d))); err != nil {
			return err
		}
	}
	if err := step("mount /proc", unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")); err != nil {
		return err
	}
	dev := filepath.Join(root, "dev")
	if err := step("mount /dev", unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m")); err != nil {
		return err
	}
	// The host's device nodes; nothing else of the host's /dev.
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		target := filepath.Join(dev, d)
		if err := step("make /dev/"+d, os.WriteFile(target, nil, 0o666)); err != nil {
			return err
		}
		if err := step("bind /dev/"+d, unix.Mount("/dev/"+d, target, "", unix.MS_BIND, "")); err != nil {
			return err
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := step("link /dev/"+name, os.Symlink(target, filepath.Join(dev, name))); err != nil {
			return err
		}
	}
	shm := filepath.Join(dev, "shm")
	if err := step("make /dev/shm", os.Mkdir(shm, 0o755)); err != nil {
		return err
	}
	if err := step("make /dev/shm", os.Chmod(shm, 0o1777)); err != nil {
		return err
	}
	return step("mount /tmp", unix.Mount(filepath.Join(stage, "tmp"), filepath.Join(root, "tmp"), "", unix.MS_BIND, ""))
}

// ensureDir makes p a directory, replacing whatever the image has there (a
// symlink must not move a mount out of the root).
func ensureDir(p string) error {
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		if err := os.Remove(p); err != nil {
			return err
		}
	case !os.IsNotExist(err):
		return err
	}
	return os.Mkdir(p, 0o755)
}

// mountEmulator bind-mounts the emulator (fd) read-only at target.
func mountEmulator(target string, fd int) error {
	if err := step("make the emulator's mount point", os.WriteFile(target, nil, 0o755)); err != nil {
		return err
	}
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := step("bind the emulator", unix.Mount(src, target, "", unix.MS_BIND, "")); err != nil {
		return err
	}
	// A remount must repeat the flags the host's mount locks.
	var st unix.Statfs_t
	if err := step("read the emulator's mount flags", unix.Statfs(target, &st)); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	return step("make the emulator read-only", unix.Mount("", target, "", flags, ""))
}

// pivot makes root the root directory and detaches the host's filesystem.
func pivot(root string) error {
	if err := step("enter the new root", unix.Chdir(root)); err != nil {
		return err
	}
	if err := step("pivot_root", unix.PivotRoot(".", ".")); err != nil {
		return err
	}
	if err := step("detach the host's filesystem", unix.Unmount(".", unix.MNT_DETACH)); err != nil {
		return err
	}
	return step("enter /", unix.Chdir("/"))
}
