package rootfs

import "io/fs"

// ModeBits are the mode bits an Entry or an Info carries besides its type:
// the permissions, setuid, setgid and sticky.
const ModeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// Unix mode bits of setuid, setgid and sticky (tar's c_ISUID, c_ISGID and
// c_ISVTX; chmod's 4000, 2000 and 1000).
const (
	unixSetuid = 0o4000
	unixSetgid = 0o2000
	unixSticky = 0o1000
)

// FileMode turns a Unix mode (tar's mode field, an octal --chmod) into
// fs.FileMode bits: the permissions plus fs.ModeSetuid, fs.ModeSetgid and
// fs.ModeSticky. Other bits (a file type) are dropped.
func FileMode(unix int64) fs.FileMode {
	m := fs.FileMode(unix & 0o777)
	if unix&unixSetuid != 0 {
		m |= fs.ModeSetuid
	}
	if unix&unixSetgid != 0 {
		m |= fs.ModeSetgid
	}
	if unix&unixSticky != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// UnixMode is FileMode backwards: m's permissions and setuid, setgid and
// sticky bits as a Unix mode, for a tar header. Other bits are dropped.
func UnixMode(m fs.FileMode) int64 {
	unix := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		unix |= unixSetuid
	}
	if m&fs.ModeSetgid != 0 {
		unix |= unixSetgid
	}
	if m&fs.ModeSticky != 0 {
		unix |= unixSticky
	}
	return unix
}
