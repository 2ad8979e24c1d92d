package rootfs

import "io/fs"

// Kind says what an Entry becomes in the image.
type Kind int

const (
	// File is a regular file whose content is read from Entry.Source.
	File Kind = iota
	// Dir is a directory.
	Dir
	// Symlink is a symbolic link to Entry.Linkname.
	Symlink
)

// Entry is one item to put into an image's filesystem, as a new layer holds
// it. Path is absolute inside the image ("/usr/bin/gitlab-runner-helper");
// Mode holds the permission bits plus setuid/setgid/sticky (ModeBits), never
// the type bits; a Symlink with a zero Mode is written as 0777. UID and GID
// are written as given, with no user or group names.
type Entry struct {
	Path     string
	Kind     Kind
	Source   string // host file, for File
	Linkname string // link target, for Symlink
	Mode     fs.FileMode
	UID, GID int
}
