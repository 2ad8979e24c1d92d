package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// binfmtPath is where the sandbox's own binfmt_misc is mounted.
const binfmtPath = "/dev/.helperbuild-binfmt"

// becomeUser switches the init to u for the exec: groups, gid, uid. Leaving
// uid 0 clears the effective, permitted and ambient capabilities; the
// inheritable ones are cleared here, so nothing can come back on exec
// (no_new_privs is already set).
func becomeUser(u User) error {
	if err := unix.Setgroups(u.Groups); err != nil {
		return fmt.Errorf("setgroups %v: %w", u.Groups, err)
	}
	if err := unix.Setresgid(u.GID, u.GID, u.GID); err != nil {
		return fmt.Errorf("setresgid %d: %w", u.GID, err)
	}
	if err := unix.Setresuid(u.UID, u.UID, u.UID); err != nil {
		return fmt.Errorf("setresuid %d: %w", u.UID, err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// bindInto binds the host file or directory fd at m.Target inside root,
// making the mount point first; nosuid and nodev always, read-only when m
// says so.
func bindInto(root string, m Mount, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return step("stat "+m.Source, err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	target, err := mountPoint(root, m.Target, isDir)
	if err != nil {
		return step("make the mount point "+m.Target, err)
	}
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := step("bind "+m.Target, unix.Mount(src, target, "", unix.MS_BIND, "")); err != nil {
		return err
	}
	return step("remount "+m.Target, remountBind(target, m.ReadOnly))
}

// mountPoint makes target (absolute, inside root) a directory or an empty
// file, and every component on the way a directory, replacing what is in
// the way (in the overlay), so that no symlink of the image can move the
// mount elsewhere. It returns the host path inside root.
func mountPoint(root, target string, isDir bool) (string, error) {
	parts := strings.Split(strings.Trim(filepath.Clean(target), "/"), "/")
	p := root
	for i, part := range parts {
		p = filepath.Join(p, part)
		last := i == len(parts)-1
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir() && (!last || isDir):
			continue
		case err == nil && fi.Mode().IsRegular() && last && !isDir:
			continue
		case err == nil:
			if err := os.RemoveAll(p); err != nil {
				return "", err
			}
		case !os.IsNotExist(err):
			return "", err
		}
		if last && !isDir {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return "", err
			}
			continue
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return "", err
		}
	}
	return p, nil
}

// remountBind remounts the bind mount at target nosuid and nodev, and
// read-only when ro, repeating the flags the host's mount locks.
func remountBind(target string, ro bool) error {
	var st unix.Statfs_t
	if err := unix.Statfs(target, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NOSUID | unix.MS_NODEV)
	if ro {
		flags |= unix.MS_RDONLY
	}
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_RDONLY, unix.MS_RDONLY}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	return unix.Mount("", target, "", flags, "")
}

// privateBinfmt mounts a binfmt_misc of the sandbox's user namespace (Linux
// 6.7 or later) and registers line in it when there is one.
func privateBinfmt(line string) error {
	if err := step("make "+binfmtPath, os.Mkdir(binfmtPath, 0o755)); err != nil {
		return err
	}
	if err := step("mount a binfmt_misc of the sandbox's own (Linux 6.7 or later)", unix.Mount("binfmt_misc", binfmtPath, "binfmt_misc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")); err != nil {
		return err
	}
	if line == "" {
		return nil
	}
	return step("register the emulator in binfmt_misc", os.WriteFile(binfmtPath+"/register", []byte(line), 0))
}
