package rootfs

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

func fileAt(p string) Entry {
	return Entry{Path: p, Kind: File, Source: "/src", Mode: 0o644}
}
func dirAt(p string, mode fs.FileMode, uid, gid int) Entry {
	return Entry{Path: p, Kind: Dir, Mode: mode, UID: uid, GID: gid}
}

func TestPlace(t *testing.T) {
	base := build(t, tartest.MergedUsr())
	usr, usrBin := dirAt("/usr", 0o755, 0, 0), dirAt("/usr/bin", 0o755, 0, 0)
	tests := []struct {
		name string
		in   []Entry
		want []Entry
		err  string
	}{
		{name: "relative symlink on the way", in: []Entry{fileAt("/bin/foo")},
			want: []Entry{fileAt("/usr/bin/foo"), usrBin, usr}},
		{name: "absolute symlink on the way", in: []Entry{fileAt("/sbin/x")},
			want: []Entry{fileAt("/usr/sbin/x"), dirAt("/usr/sbin", 0o755, 0, 0), usr}},
		{name: "a link out of the root stops at the root", in: []Entry{fileAt("/etc/up/x")},
			want: []Entry{fileAt("/opt/x"), dirAt("/opt", 0o750, 7, 8)}},
		{name: "parents keep the base's mode and owner, missing ones are left to layer.Write",
			in:   []Entry{fileAt("/tmp/x"), fileAt("/home/gitlab-runner/.config/y")},
			want: []Entry{fileAt("/tmp/x"), fileAt("/home/gitlab-runner/.config/y"), dirAt("/tmp", fs.ModeSticky|0o777, 0, 0), dirAt("/home/gitlab-runner", 0o700, 100, 65533), dirAt("/home", 0o755, 0, 0)}},
		{name: "missing directories below a symlink", in: []Entry{fileAt("/bin/new/deeper/x")},
			want: []Entry{fileAt("/usr/bin/new/deeper/x"), usrBin, usr}},
		{name: "a final symlink is not followed for a file", in: []Entry{fileAt("/bin")},
			want: []Entry{fileAt("/bin")}},
		{name: "a directory entry at a link to a directory moves to it, explicit entries keep their metadata",
			in:   []Entry{dirAt("/bin", 0o700, 1, 1), dirAt("/root", 0o700, 0, 0), dirAt("/new", 0o750, 2, 2)},
			want: []Entry{dirAt("/usr/bin", 0o700, 1, 1), dirAt("/new", 0o750, 2, 2), usr}},
		{name: "two paths onto one: the later wins, directories keep the first",
			in:   []Entry{fileAt("/bin/a"), {Path: "/usr/bin/a", Kind: Symlink, Linkname: "b"}, dirAt("/bin/d", 0o700, 0, 0), dirAt("/usr/bin/d", 0o755, 0, 0)},
			want: []Entry{{Path: "/usr/bin/a", Kind: Symlink, Linkname: "b"}, dirAt("/usr/bin/d", 0o700, 0, 0), usrBin, usr}},
		{name: "paths layer.Write refuses pass unchanged", in: []Entry{fileAt("bin/x"), fileAt("/bin/../x"), fileAt("/")},
			want: []Entry{fileAt("bin/x"), fileAt("/bin/../x"), fileAt("/")}},
		{name: "through a file", in: []Entry{fileAt("/etc/passwd/x")}, err: "/etc/passwd/x on the base image: not a directory"},
		{name: "through a loop", in: []Entry{fileAt("/loop/x")}, err: "/loop/x on the base image: too many levels of symbolic links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := base.Place(tt.in)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHasDir(t *testing.T) {
	base := build(t, tartest.MergedUsr())
	for p, want := range map[string]bool{
		"/bin": true, "/usr/bin": true, "/sbin": true, "/tmp": true, "/root": true, "/etc/up": true,
		"/usr/bin/ls": false, "/nope": false, "/loop": false, "/bin/ls": false,
	} {
		assert.Equal(t, want, base.HasDir(p), p)
	}
}
