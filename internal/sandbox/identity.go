package sandbox

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// MappedIDs is how many uids and gids, from 0, a privileged caller's
// sandbox maps: 0 to OutsideID, n to OutsideID+n. A caller that is not root
// maps only 0, to its own ids.
const MappedIDs = 65536

func mappedIDs(priv bool) int {
	if priv {
		return MappedIDs
	}
	return 1
}

// HostID returns the host uid (or gid) that is id inside a sandbox, so
// that an unpacked tree can keep the image's owners. ok is false when the
// caller cannot map id (it is not root, or id is MappedIDs or more).
func HostID(id int) (host int, ok bool) {
	priv := privileged()
	switch {
	case id == 0:
		uid, _ := ownerOf(priv)
		return uid, true
	case priv && id > 0 && id < MappedIDs:
		return OutsideID + id, true
	}
	return 0, false
}

// CanRunAs reports whether this caller can run programs as users other
// than root (Spec.User): only root can map more ids than its own.
func CanRunAs() bool { return privileged() }

// User is who the program runs as: a uid, a primary gid and supplementary
// groups, all below MappedIDs, with no capabilities (effective, permitted,
// inheritable and ambient sets empty) and no_new_privs, as a Kubernetes
// container with runAsUser, fsGroup and "capabilities: drop: [ALL]" and
// allowPrivilegeEscalation false.
type User struct {
	UID, GID int
	Groups   []int
}

// Mount binds the host file or directory Source at Target, an absolute
// path inside the sandbox. Whatever the image has at Target or on the way
// to it (a symlink, a file where a directory is needed) is replaced, in the
// sandbox's overlay only, so a mount never lands outside the root.
type Mount struct {
	Source, Target string
	ReadOnly       bool
}

// Binfmt is the sandbox's own binfmt_misc (see Spec.Binfmt): empty, or
// with one entry for the magic and mask of an architecture's ELF files, as
// in qemu-user's binfmt.d files ("\x7fELF\x02..."), matched from offset 0.
// The zero value is an empty one: the host's entries do not apply, so a
// foreign program a native image starts fails as it would on a node.
type Binfmt struct {
	Name, Magic, Mask string
}

// line is the register line of b with the emulator inside the sandbox as
// interpreter: F (opened now, so the path need not exist later) and P
// (argv[0] preserved, which qemu-user reads from AT_FLAGS, so a busybox
// applet started by name keeps its name).
func (b *Binfmt) line() (string, error) {
	if *b == (Binfmt{}) {
		return "", nil
	}
	for _, f := range []string{b.Name, b.Magic, b.Mask} {
		if f == "" || strings.ContainsAny(f, ":\n/") {
			return "", fmt.Errorf("sandbox: binfmt entry %q %q %q: fields must be non-empty, without ':', '/' or newlines", b.Name, b.Magic, b.Mask)
		}
	}
	return ":" + b.Name + ":M::" + b.Magic + ":" + b.Mask + ":" + emulatorPath + ":PF", nil
}

// checkExtras refuses what the caller cannot have: a user or mounts it
// cannot map, a binfmt entry without an emulator.
func checkExtras(s Spec) error {
	if s.User != nil {
		if !CanRunAs() {
			return &UnavailableError{Step: "run as uid " + fmt.Sprint(s.User.UID), Err: errors.New("only root can map the ids of users other than root into a sandbox")}
		}
		for _, id := range append([]int{s.User.UID, s.User.GID}, s.User.Groups...) {
			if id < 0 || id >= MappedIDs {
				return fmt.Errorf("sandbox: id %d of user %d: want 0 to %d", id, s.User.UID, MappedIDs-1)
			}
		}
	}
	for _, m := range s.Mounts {
		if !path.IsAbs(m.Target) || path.Clean(m.Target) == "/" || m.Source == "" {
			return fmt.Errorf("sandbox: mount %q at %q: want a host path and an absolute target other than /", m.Source, m.Target)
		}
	}
	if s.Binfmt != nil && s.Binfmt.Name != "" && s.Emulator == "" {
		return errors.New("sandbox: a binfmt entry needs Spec.Emulator")
	}
	return nil
}
