package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// readmeExitCodes is README.md's exit-code table: each code and its
// meaning ("130, 143" is two codes of one meaning).
func readmeExitCodes(t *testing.T) map[int]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Exit codes\n")
	require.True(t, ok, "README.md has an Exit codes section")
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile(`(?m)^\| ([0-9, ]+) \| (.+) \|$`)
	out := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		for _, c := range strings.Split(m[1], ",") {
			var code int
			for _, d := range strings.TrimSpace(c) {
				code = code*10 + int(d-'0')
			}
			out[code] = m[2]
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestExitCodesAsDocumented walks README's exit-code table: every code in
// it is what a command of that kind exits with, and every case below is
// one the table's meaning for its code names (issue 39: an unwritable
// --output exited 2 where the table said 1, a layout that does not exist
// exited 1 where it said 3).
func TestExitCodesAsDocumented(t *testing.T) {
	table := readmeExitCodes(t)
	dir := relModule(t)
	t.Chdir(dir)
	host := testkit.Registry(t)
	bad := testkit.ArchImage(t, relEnv(t), testkit.Platform(t, "linux/amd64"), "arm64")
	require.NoError(t, remote.Write(testkit.Ref(t, host+"/g/wrong-arch:v1"), bad))
	require.NoError(t, os.WriteFile("afile", []byte("x"), 0o644))
	_, err := layout.Write(filepath.Join(dir, "lay"), empty.Index)
	require.NoError(t, err)

	cancelled := func(sig syscall.Signal) context.Context {
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(relSignal{sig})
		return ctx
	}
	for _, tt := range []struct {
		code   int
		readme string // what of the table's meaning for code this case is
		ctx    context.Context
		args   []string
	}{
		{0, "done", nil, []string{"version"}},
		{1, "a check", nil, []string{"verify", "--platforms", "linux/amd64", host + "/g/wrong-arch:v1"}},
		{2, "a flag", nil, []string{"build", "--no-such-flag"}},
		{2, "an output (`--output`", nil, []string{"build", "--platforms", "linux/amd64", "--output", "oci:/proc/nope", "./cmd/app"}},
		{2, "`--metadata-file`", nil, []string{"verify", "--metadata-file", "afile/m.json", host + "/g/wrong-arch:v1"}},
		{2, "recipe", nil, []string{"build"}}, // no helperbuild.yaml here
		{3, "the registry answers 404 for", nil, []string{"verify", host + "/g/wrong-arch:v2"}},
		{3, "a layout or archive", nil, []string{"verify", "oci:" + filepath.Join(dir, "no", "such") + ":x"}},
		{3, "a layout or archive", nil, []string{"verify", "oci-archive:" + filepath.Join(dir, "no-such.tar")}},
		{3, "a `--base`", nil, []string{"build", "--platforms", "linux/amd64", "--base", "oci:" + filepath.Join(dir, "no", "such"), "./cmd/app"}},
		{3, "an entry of it", nil, []string{"verify", "oci:" + filepath.Join(dir, "lay") + ":x"}},
		{130, "SIGINT", cancelled(syscall.SIGINT), []string{"verify", host + "/g/wrong-arch:v1"}},
		{143, "SIGTERM", cancelled(syscall.SIGTERM), []string{"verify", host + "/g/wrong-arch:v1"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			meaning, ok := table[tt.code]
			require.True(t, ok, "exit %d is not in README's table", tt.code)
			assert.Contains(t, meaning, tt.readme, "README's meaning of %d", tt.code)
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			var out, errb bytes.Buffer
			code := Run(ctx, tt.args, &out, &errb, relEnv(t))
			assert.Equal(t, tt.code, code, errb.String())
		})
	}
	for code := range table {
		found := false
		for _, c := range []int{0, 1, 2, 3, 130, 143} {
			found = found || c == code
		}
		assert.True(t, found, "README's exit %d has no case here", code)
	}
}
