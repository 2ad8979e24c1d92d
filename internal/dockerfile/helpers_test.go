package dockerfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"
)

// testName is the file name errors carry in tests.
const testName = "dockerfiles/test/Dockerfile"

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
	armv7 = v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}
)

func mustParse(t testing.TB, text string) *File {
	t.Helper()
	f, err := Parse(testName, strings.NewReader(text))
	require.NoError(t, err)
	return f
}

func mustResolve(t testing.TB, text string, tgt Target) *Stage {
	t.Helper()
	if tgt.Platform.OS == "" {
		tgt.Platform = amd64
	}
	st, err := mustParse(t, text).Resolve(tgt)
	require.NoError(t, err)
	return st
}

// apply parses, resolves for linux/amd64 and applies on base.
func apply(t testing.TB, text string, base v1.Config, ctx Contexts) (*Result, error) {
	t.Helper()
	return mustResolve(t, text, Target{}).Apply(base, ctx)
}

// node is one item of a test context directory.
type node struct {
	path string
	mode fs.FileMode // 0: 0644 for files, 0755 for dirs
	data string      // file content
	dir  bool
	link string // symlink target
}

// makeTree creates nodes under a new temporary directory and returns it.
func makeTree(t testing.TB, nodes ...node) string {
	t.Helper()
	root := t.TempDir()
	for _, n := range nodes {
		p := filepath.Join(root, filepath.FromSlash(n.path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		switch {
		case n.link != "":
			require.NoError(t, os.Symlink(n.link, p))
		case n.dir:
			mode := n.mode
			if mode == 0 {
				mode = 0o755
			}
			require.NoError(t, os.MkdirAll(p, 0o755))
			require.NoError(t, os.Chmod(p, mode))
		default:
			mode := n.mode
			if mode == 0 {
				mode = 0o644
			}
			require.NoError(t, os.WriteFile(p, []byte(n.data), 0o600))
			require.NoError(t, os.Chmod(p, mode))
		}
	}
	return root
}

// createdBy lists the history CreatedBy of steps.
func createdBy(steps []Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.History.CreatedBy
	}
	return out
}
