package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// exampleStep is one Example: line of a command's --help, as a newcomer
// pastes it. Outside names the service it needs that no test may reach:
// such a line is only parsed. setup makes what the line takes for granted
// (files a job before it left, the directory it runs in).
type exampleStep struct {
	line    string
	outside string
	setup   func(t *testing.T)
}

// TestEveryExampleRuns: every Example: line of every command runs, in
// order, as a user would paste it (registry.example.com is a local
// registry, the module is the bundled example tagged v1.2.3 with a
// ./cmd/app), and succeeds (issue 39: push --help's --part-file
// parts/arm64.json failed on a missing directory). A new example without
// a step here fails the test.
func TestEveryExampleRuns(t *testing.T) {
	host := testkit.Registry(t)
	five := platform.Known()[:0]
	for _, s := range []string{"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"} {
		five = append(five, testkit.Platform(t, s))
	}
	require.NoError(t, remote.WriteIndex(testkit.Ref(t, host+"/group/alpine:3.20"), testkit.Index(t, 512, 1, five...)))

	dir := exampleCopy(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "app", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "example")
	git("tag", "v1.2.3")
	t.Chdir(dir)
	initDir := exampleCopy(t, "helperbuild.yaml")
	env := baseEnv("CI_REGISTRY_IMAGE=" + host + "/group") // as in a GitLab job

	inDir := func(d string) func(t *testing.T) { return func(t *testing.T) { t.Chdir(d) } }
	steps := []exampleStep{
		{line: "helperbuild version"},
		{line: "helperbuild build --platforms linux/amd64,linux/arm64"},
		{line: "helperbuild build --image gitlab-runner-helper --output oci-archive:out/helper.tar"},
		{line: "helperbuild build --base registry.example.com/group/alpine:3.20 --platforms all -v ./cmd/app"},
		{line: "helperbuild push --repo registry.example.com/group"},
		{line: "helperbuild push --repo registry.example.com/group --tag v1.2.3"},
		{line: "helperbuild push --base registry.example.com/group/alpine:3.20 --tag registry.example.com/group/app:v1 ./cmd/app"},
		{line: "helperbuild push --by-digest --platforms linux/arm64 --release-platforms linux/amd64,linux/arm64 --part-file parts/arm64.json"},
		{line: `helperbuild merge "parts/*.json"`, setup: func(t *testing.T) {
			// The other job of the release.
			code, _, stderr := run(t, env, "push", "--by-digest", "--platforms", "linux/amd64", "--release-platforms", "linux/amd64,linux/arm64", "--part-file", "parts/amd64.json")
			require.Equal(t, 0, code, stderr)
		}},
		{line: "helperbuild merge --platforms linux/amd64,linux/arm64 --metadata-file out/release.json parts/"},
		{line: "helperbuild index --tag registry.example.com/group/helper:v1.2.3 registry.example.com/group/gitlab-runner-helper:x86_64-v1.2.3 registry.example.com/group/gitlab-runner-helper:arm64-v1.2.3"},
		{line: "helperbuild index --gitlab-helper registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper --version v17.10.0 --dry-run --tag registry.example.com/group/helper:v17.10.0",
			outside: "GitLab's registry (registry.gitlab.com)"},
		{line: "helperbuild verify registry.example.com/group/gitlab-runner-helper:v1.2.3"},
		{line: "helperbuild verify --platforms linux/amd64,linux/arm64 registry.example.com/group/gitlab-runner-helper:v1.2.3"},
		{line: "helperbuild verify --run oci:out/oci:gitlab-runner-helper:v1.2.3"},
		{line: "helperbuild verify --contract helper --run registry.example.com/group/gitlab-runner-helper:v1.2.3",
			outside: "a helper on a base that meets GitLab's contract (docs/gitlab-image-contract.md); the example's are on scratch"},
		{line: "helperbuild verify --nodes nodes.json --format json registry.example.com/group/gitlab-runner-helper:v1.2.3", setup: func(t *testing.T) {
			require.NoError(t, os.WriteFile("nodes.json", []byte(`{"items":[{"metadata":{"name":"a"},"status":{"nodeInfo":{"operatingSystem":"linux","architecture":"amd64"}}},{"metadata":{"name":"b"},"status":{"nodeInfo":{"operatingSystem":"linux","architecture":"arm64"}}}]}`), 0o644))
		}},
		{line: "helperbuild init --base registry.example.com/group/alpine:3.20 --stdout", setup: inDir(initDir)},
		{line: "helperbuild init"},
	}

	// Every example of --help has its step, and no step is stale.
	var help []string
	walk(NewRootCmd(nil), func(c *cobra.Command) {
		for _, l := range strings.Split(c.Example, "\n") {
			if l = strings.TrimSpace(l); !slices.Contains(help, l) {
				help = append(help, l)
			}
		}
	})
	var lines []string
	for _, s := range steps {
		lines = append(lines, s.line)
	}
	assert.ElementsMatch(t, help, lines, "each Example: line of --help has one step")

	for _, s := range steps {
		args := strings.Fields(strings.ReplaceAll(s.line, "registry.example.com", host))[1:]
		for i, a := range args {
			args[i] = strings.Trim(a, `"`)
		}
		if s.outside != "" {
			cmd, rest, err := NewRootCmd(nil).Find(args)
			require.NoError(t, err, s.line)
			require.NoError(t, cmd.ParseFlags(rest), "%s (needs %s: its flags are only parsed)", s.line, s.outside)
			continue
		}
		if s.setup != nil {
			s.setup(t)
		}
		code, stdout, stderr := run(t, env, args...)
		require.Equal(t, 0, code, "%s\nstdout:\n%s\nstderr:\n%s", s.line, stdout, stderr)
	}
}
