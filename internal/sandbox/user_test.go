package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program run as a user is that user with its groups, has no capability
// at all and no_new_privs, writes where its ids may (a group-writable
// directory bound in, as a Kubernetes emptyDir with fsGroup) and nowhere
// else: not the image's root-owned files, not a read-only bind.
func TestRunAsUser(t *testing.T) {
	if !CanRunAs() {
		t.Skip("running as another user needs root")
	}
	for _, a := range arches(t) {
		t.Run(a.goarch, func(t *testing.T) {
			root := imageRoot(t, a.goarch, "inspect")
			host := t.TempDir()
			ro := filepath.Join(host, "configmaps")
			require.NoError(t, os.Mkdir(ro, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ro, "entrypoint"), []byte("#!/bin/bash"), 0o644))
			empty := filepath.Join(host, "empty")
			require.NoError(t, os.Mkdir(empty, 0o755))
			uid, _ := HostID(0)
			gid, ok := HostID(65533)
			require.True(t, ok)
			require.NoError(t, os.Chown(empty, uid, gid))
			require.NoError(t, os.Chmod(empty, 0o2775))
			// A symlink where a mount goes must not move the mount out of the root.
			require.NoError(t, os.Symlink(host, filepath.Join(root, "configmaps")))
			require.NoError(t, os.Lchown(filepath.Join(root, "configmaps"), uid, uid))

			var out bytes.Buffer
			err := (&Runner{}).Run(context.Background(), Spec{Root: root, Path: "/usr/bin/inspect", Emulator: a.emulator,
				Env:    []string{"WRITE_PATHS=/etc/x,/configmaps/x,/home/runner/.config/x", "READ_PATHS=/configmaps/entrypoint"},
				User:   &User{UID: 100, GID: 65533, Groups: []int{65533}},
				Mounts: []Mount{{Source: ro, Target: "/configmaps", ReadOnly: true}, {Source: empty, Target: "/home/runner/.config"}},
				Stdout: &out, Stderr: &out})
			require.NoError(t, err, out.String())
			f := facts(out.String())
			assert.Equal(t, "100", f["uid"])
			assert.Equal(t, "65533", f["gid"])
			assert.Equal(t, "[65533]", f["groups"])
			for _, c := range []string{"capinh", "capprm", "capeff", "capamb"} {
				assert.Equal(t, "0000000000000000", f[c], c)
			}
			assert.Equal(t, "1", f["no_new_privs"])
			assert.Contains(t, f["write:/etc/x"], "permission denied", "the image's root-owned /etc")
			assert.Contains(t, f["write:/configmaps/x"], "read-only file system")
			assert.Equal(t, "ok", f["write:/home/runner/.config/x"], "the group-writable empty directory")
			assert.Equal(t, "#!/bin/bashok", f["read:/configmaps/entrypoint"], "read by uid 100")
			_, err = os.Stat(filepath.Join(empty, "x"))
			assert.NoError(t, err, "the empty directory is the host's, so later steps see what this one wrote")
			entries, err := os.ReadDir(ro)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing was written into the read-only source")
		})
	}
}

func TestRunAsUserRefusesUnmappedIDs(t *testing.T) {
	if !CanRunAs() {
		t.Skip("running as another user needs root")
	}
	err := (&Runner{}).Run(context.Background(), Spec{Root: t.TempDir(), Path: "/x", User: &User{UID: MappedIDs}})
	assert.ErrorContains(t, err, "want 0 to 65535")
}
