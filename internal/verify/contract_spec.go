package verify

import (
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The lists below are docs/gitlab-image-contract.md in code: what GitLab
// Runner and its Helm chart expect of the images, each with why it matters.

const (
	caBundle       = "/etc/ssl/certs/ca-certificates.crt"
	defaultPath    = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	runnerHome     = "/home/gitlab-runner"
	whyCA          = "HTTPS to GitLab and the registry needs a CA bundle"
	whyHelperTools = "the job scripts the runner generates call it"
	whyChartTools  = "the Helm chart's scripts call it"
)

type itemKind int

const (
	executable itemKind = iota // regular file with an x bit for the runtime user
	nonEmpty                   // regular, non-empty file
)

// item is one file the contract requires, by absolute path or by command
// name on the image's PATH.
type item struct {
	path      string // "/usr/bin/env" or a command name ("tee") looked up on PATH
	kind      itemKind
	why       string
	static    bool   // must be a statically linked ELF
	staticWhy string // why it must be static
}

func (it item) onPath() bool { return !strings.HasPrefix(it.path, "/") }

// spec is one image kind's contract.
type spec struct {
	items []item
	// entrypoint reports whether the last command of /entrypoint is right.
	entrypoint     func(fields []string) bool
	entrypointWant string
	entrypointWhy  string
	buildScript    bool                        // check gitlab-runner-build sets umask 0000
	config         func(*v1.Config, *findings) // config checks, nil for none
	runtimeUser    bool                        // check passwd, home, /tmp and x bits for uid 100 or 999
	// startCovers are the items (paths, command names) the start-up run
	// exercises: with Run, their file checks are hints (runWins).
	startCovers []string
}

func tools(names string, why string) []item {
	var out []item
	for _, n := range strings.Fields(names) {
		out = append(out, item{path: n, why: why})
	}
	return out
}

func helperSpec() spec {
	items := []item{
		{path: "/usr/bin/gitlab-runner-helper", why: "executors and generated job scripts call it by this absolute path",
			static: true, staticWhy: "the runner copies it into build containers, it must be static"},
		{path: "gitlab-runner-helper", why: "job scripts also call it by name"},
		{path: "gitlab-runner-build", why: "the Kubernetes executor runs every stage through it"},
		{path: "/bin/bash", why: "gitlab-runner-build runs every stage with /bin/bash"},
		{path: "sh", why: "the image's CMD and the runner's shell detection run sh"},
		{path: "/usr/bin/env", why: "scripts the runner generates start with #!/usr/bin/env"},
		{path: "/usr/bin/dumb-init", why: "the ENTRYPOINT runs it as PID 1 to forward signals and reap processes",
			static: true, staticWhy: "the contract wants the static build, independent of the image's libc"},
		{path: "/entrypoint", why: "the ENTRYPOINT runs it"},
		{path: "git", why: "the helper fetches the repository with git"},
		{path: "git-lfs", why: "the helper fetches Git LFS objects with git-lfs"},
		{path: caBundle, kind: nonEmpty, why: whyCA},
	}
	items = append(items, tools("tee mkdir rm chmod find touch mv printf cut sort sed awk hostname cat", whyHelperTools)...)
	return spec{
		items: items,
		entrypoint: func(f []string) bool {
			return slices.Equal(f, []string{"exec", `"$@"`})
		},
		entrypointWant: `exec "$@"`,
		entrypointWhy:  "the container's command must replace the entrypoint script",
		buildScript:    true,
		config:         helperConfig,
		startCovers: []string{"gitlab-runner-helper", "gitlab-runner-build", "/usr/bin/gitlab-runner-build", "/bin/bash", "sh",
			"/usr/bin/env", "/usr/bin/dumb-init", "/entrypoint", "git", "git-lfs", "tee", "mkdir", "cat"},
	}
}

func runnerSpec() spec {
	const chartCmd = "the Helm chart runs /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint"
	items := []item{
		{path: "/usr/bin/dumb-init", why: chartCmd},
		{path: "/bin/bash", why: chartCmd},
		{path: "sh", why: whyChartTools},
		{path: "/usr/bin/pgrep", why: "the Helm chart's readiness probe runs /usr/bin/pgrep"},
		{path: "/entrypoint", why: "the Helm chart's scripts run /entrypoint register, run and unregister"},
		{path: "gitlab-runner", why: "/entrypoint execs gitlab-runner"},
		{path: "/usr/share/gitlab-runner/clear-docker-cache", why: "the runner package ships it to clean up Docker executor caches"},
		{path: caBundle, kind: nonEmpty, why: whyCA},
	}
	items = append(items, tools("timeout grep seq sleep mkdir cp cat", whyChartTools)...)
	return spec{
		items: items,
		entrypoint: func(f []string) bool {
			return len(f) == 3 && f[0] == "exec" && path.Base(f[1]) == "gitlab-runner" && f[2] == `"$@"`
		},
		entrypointWant: `exec gitlab-runner "$@"`,
		entrypointWhy:  "the Helm chart's scripts call /entrypoint register, /entrypoint run and /entrypoint unregister --all-runners",
		runtimeUser:    true,
		startCovers: []string{"/usr/bin/dumb-init", "/bin/bash", "sh", "/usr/bin/pgrep", "/entrypoint", "gitlab-runner",
			"timeout", "grep", "seq", "sleep", "mkdir", "cp", "cat", runnerHome, runnerHome + "/.gitlab-runner", "/etc/passwd"},
	}
}

// helperConfig checks the helper image's config against upstream's.
func helperConfig(c *v1.Config, f *findings) {
	wantEntrypoint := []string{"/usr/bin/dumb-init", "/entrypoint"}
	if !slices.Equal(c.Entrypoint, wantEntrypoint) {
		f.fail(`entrypoint is ` + quoteList(c.Entrypoint) + `, want ["/usr/bin/dumb-init", "/entrypoint"]: dumb-init must be PID 1 to forward signals and reap processes`)
	}
	if !slices.Equal(c.Cmd, []string{"sh"}) {
		f.fail(`cmd is ` + quoteList(c.Cmd) + `, want ["sh"]: a helper started without a command must get a shell, as upstream's does`)
	}
	switch p, ok := envPath(c.Env); {
	case !ok:
		f.fail("config has no PATH: executors run gitlab-runner-helper, gitlab-runner-build and the tools by name")
	case p != defaultPath:
		f.warn("config PATH is " + p + ", upstream uses " + defaultPath)
	}
	switch c.User {
	case "", "root", "0", "0:0", "root:root", "root:0", "0:root":
	default:
		f.fail("config user is " + c.User + ", want root: the helper prepares build directories, caches and artifacts as root")
	}
}

// envPath returns the PATH value of a config's Env (the last one wins).
func envPath(env []string) (string, bool) {
	val, ok := "", false
	for _, e := range env {
		if v, found := strings.CutPrefix(e, "PATH="); found {
			val, ok = v, true
		}
	}
	return val, ok
}

func quoteList(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = `"` + v + `"`
	}
	return "[" + strings.Join(q, ", ") + "]"
}
