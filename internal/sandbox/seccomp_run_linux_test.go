package sandbox

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
)

// Each call the filter denies, made by a program in the sandbox, is refused
// (natively and under qemu-user, whose calls are the host's), the run ends
// with the program's report, and nothing reaches the host.
func TestDeniedCalls(t *testing.T) {
	for _, a := range arches(t) {
		t.Run(a.goarch, func(t *testing.T) {
			calls := sandboxtest.DeniedCalls(a.goarch)
			names := make([]string, len(calls))
			for i, c := range calls {
				names[i] = "sys-" + c.Name
			}
			root := imageRoot(t, a.goarch, append(names, "inspect")...)
			before := tree(t, root)
			tr := &sandboxtest.Tracker{}
			r := &Runner{Started: tr.Started}

			var out bytes.Buffer
			require.NoError(t, r.Run(context.Background(), Spec{Root: root, Path: "/usr/bin/inspect", Emulator: a.emulator, Stdout: &out, Stderr: &out}))
			assert.Equal(t, "2", facts(out.String())["seccomp"], "the program runs under a seccomp filter")

			h := sandboxtest.NewHost(t)
			var all []string
			for _, c := range calls {
				out.Reset()
				err := r.Run(context.Background(), Spec{Root: root, Path: "/usr/bin/sys-" + c.Name, Env: h.Env(), Emulator: a.emulator, Stdout: &out, Stderr: &out})
				var exit *exec.ExitError
				require.ErrorAs(t, err, &exit, out.String())
				assert.Equal(t, 1, exit.ExitCode(), out.String())
				assert.True(t, c.Refused(strings.TrimSpace(out.String())), "want one of %q, got %q", c.Wants(), out.String())
				all = append(all, out.String())
			}
			h.Untouched(t, strings.Join(all, ""))
			assert.Equal(t, len(calls)+1, tr.Count())
			assert.Empty(t, tr.Leftovers())
			assert.Equal(t, before, tree(t, root), "the image's directory is never written")
		})
	}
}
