package execerr

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	// refused is go failing to fetch a module from a proxy:
	// "example.com/m@v1.0.0: reading https://proxy/example.com/m/@v/v1.0.0.zip: 403 Forbidden"
	// or "module example.com/m: reading https://proxy/...: 410 Gone".
	refused = regexp.MustCompile(`(?:([^\s@:]+)@v[^\s:]*|module ([^\s:]+)): reading (\S+): ((?:401|403|404|410)[^\n]*)`)
	// gitPrompt is go fetching a module with git, which wanted credentials.
	gitPrompt = regexp.MustCompile(`terminal prompts disabled|could not read Username`)
	// dubious is git refusing a repository another user owns.
	dubious = regexp.MustCompile(`detected dubious ownership in repository at '([^']+)'`)
)

// Hint is the way out that lines (a child's output) show, or "".
func Hint(lines []string) string {
	out := strings.Join(lines, "\n")
	if m := refused.FindStringSubmatch(out); m != nil {
		module := m[1]
		if module == "" {
			module = m[2]
		}
		return fmt.Sprintf("the module proxy refused %s (%s): let go fetch it from its origin "+
			"(GOPRIVATE=%s, with credentials for its host in ~/.netrc or git's config), name a proxy that serves it (GOPROXY), "+
			"or build from vendored modules (go mod vendor, then GOFLAGS=-mod=vendor)", module, m[4], module)
	}
	if strings.Contains(out, "missing go.sum entry") {
		return "go.sum lacks an entry the build needs: run go mod tidy in the module and commit go.mod and go.sum"
	}
	if gitPrompt.MatchString(out) {
		return "go fetched a module with git, which asked for credentials: give git credentials for that host " +
			"(~/.netrc or a git credential helper), or name a proxy that serves the module (GOPROXY)"
	}
	if m := dubious.FindStringSubmatch(out); m != nil {
		return fmt.Sprintf("git refuses a repository another user owns: git config --global --add safe.directory %s", m[1])
	}
	return ""
}
