package gitmeta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Info is what git knows about a checkout. Fields are empty when git cannot
// tell (not a repository, no commits, no remote).
type Info struct {
	Version    string    // git describe --tags --always
	Revision   string    // full commit hash of HEAD
	Branch     string    // current branch, empty when detached
	CommitTime time.Time // committer time of HEAD; zero if unknown
	Remote     string    // origin URL without credentials, as https when it was scp-like
	// RemoteURI is Remote, or, for an origin that is a local path, its
	// file: URI (absolute): a URI names the source even then.
	RemoteURI string
	Toplevel  string   // the work tree's root directory (git rev-parse --show-toplevel)
	Tags      []string // the tags pointing at HEAD, sorted
}

// Field names one field of Info, for Read's want.
type Field int

// The fields Read can fill.
const (
	Version Field = 1 << iota
	Revision
	Branch
	CommitTime
	Remote
	Toplevel
	Tags

	All = Version | Revision | Branch | CommitTime | Remote | Toplevel | Tags
)

// Read asks git about dir for the fields in want, all at once, with as
// few git commands as give them (a release job gets most of them from CI
// variables or flags, and every git start costs milliseconds of the two
// CPUs before the first compile): the root and the revision from one
// rev-parse, the branch and the tags from one for-each-ref. A missing git
// or a directory that is not a repository gives empty fields, not an
// error: every field has a fallback.
func Read(ctx context.Context, dir string, want Field) Info {
	var info Info
	try := func(args ...string) (string, bool) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return "", false
		}
		return strings.TrimSpace(out.String()), true
	}
	run := func(args ...string) string {
		out, _ := try(args...)
		return out
	}
	var wg sync.WaitGroup
	ask := func(f Field, fn func()) {
		if want&f != 0 {
			wg.Go(fn)
		}
	}
	// A command that answers two fields fills only those asked for.
	ask(Revision|Toplevel, func() {
		top, rev := rootAndRevision(try)
		keep(want, Toplevel, &info.Toplevel, top)
		keep(want, Revision, &info.Revision, rev)
	})
	ask(Branch|Tags, func() {
		branch, tags := branchAndTags(try)
		keep(want, Branch, &info.Branch, branch)
		keep(want, Tags, &info.Tags, tags)
	})
	ask(Version, func() { info.Version = run("describe", "--tags", "--always") })
	ask(CommitTime, func() {
		if sec, err := strconv.ParseInt(run("log", "-1", "--format=%ct", "HEAD"), 10, 64); err == nil {
			info.CommitTime = time.Unix(sec, 0).UTC()
		}
	})
	ask(Remote, func() {
		raw := run("config", "--get", "remote.origin.url")
		info.Remote = CleanRemote(raw)
		info.RemoteURI = remoteURI(raw, info.Remote, func() string { return run("rev-parse", "--show-toplevel") })
	})
	wg.Wait()
	return info
}

// keep sets *dst to v when want has f.
func keep[T any](want, f Field, dst *T, v T) {
	if want&f != 0 {
		*dst = v
	}
}

// rootAndRevision is the work tree's root and HEAD's commit, from one
// `git rev-parse --show-toplevel HEAD`; where that fails (no commit yet,
// not a repository) the root alone, asked again.
func rootAndRevision(try func(args ...string) (string, bool)) (top, rev string) {
	if out, ok := try("rev-parse", "--show-toplevel", "HEAD"); ok {
		if top, rev, ok = strings.Cut(out, "\n"); ok {
			return top, strings.TrimSpace(rev)
		}
	}
	top, _ = try("rev-parse", "--show-toplevel")
	return top, ""
}

// branchAndTags is the branch checked out ("" when detached) and the tags
// pointing at HEAD, sorted, from one `git for-each-ref --points-at HEAD`
// over branches and tags (%(HEAD) marks the one checked out; annotated
// tags count by the commit they point at, as for `git tag --points-at`);
// where that fails (no commit yet) the branch alone, from symbolic-ref.
func branchAndTags(try func(args ...string) (string, bool)) (branch string, tags []string) {
	out, ok := try("for-each-ref", "--points-at", "HEAD", "--format=%(HEAD) %(refname)", "refs/heads", "refs/tags")
	if !ok {
		branch, _ = try("symbolic-ref", "--short", "-q", "HEAD")
		return branch, nil
	}
	for _, line := range strings.Split(out, "\n") {
		mark, ref, _ := strings.Cut(strings.TrimLeft(line, " "), " ")
		if ref == "" { // not the current branch: the mark was a space
			mark, ref = "", mark
		}
		switch {
		case strings.HasPrefix(ref, "refs/tags/"):
			tags = append(tags, strings.TrimPrefix(ref, "refs/tags/"))
		case mark == "*" && strings.HasPrefix(ref, "refs/heads/"):
			branch = strings.TrimPrefix(ref, "refs/heads/")
		}
	}
	slices.Sort(tags)
	return branch, tags
}

// ErrNoCommit is ShowFile's error when dir's repository lacks the commit.
var ErrNoCommit = errors.New("commit not in this repository")

// ShowFile returns the file at path (slash-separated, from the work
// tree's root) in commit, as git show COMMIT:PATH reads it in dir's
// repository; git's message is in the error, which is ErrNoCommit when
// the repository does not have the commit at all.
func ShowFile(ctx context.Context, dir, commit, path string) ([]byte, error) {
	check := exec.CommandContext(ctx, "git", "cat-file", "-e", commit+"^{commit}")
	check.Dir = dir
	if check.Run() != nil {
		return nil, fmt.Errorf("%s in %s: %w", commit, dir, ErrNoCommit)
	}
	cmd := exec.CommandContext(ctx, "git", "show", commit+":"+path)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git show %s:%s in %s: %s", commit, path, dir, msg)
		}
		return nil, fmt.Errorf("git show %s:%s in %s: %w", commit, path, dir, err)
	}
	return out, nil
}

// remoteURI is cleaned (CleanRemote's output) when there is one; else,
// for a remote that is a local path (absolute, or relative to the work
// tree's root, where git runs its commands), its file: URI.
func remoteURI(raw, cleaned string, toplevel func() string) string {
	if cleaned != "" || raw == "" {
		return cleaned
	}
	p := strings.TrimPrefix(raw, "file://")
	if !filepath.IsAbs(p) {
		top := toplevel()
		if top == "" {
			return ""
		}
		p = filepath.Join(top, p)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(p))}).String()
}

// CleanRemote turns a git remote into a browsable URL without credentials:
// "git@gitlab.com:group/proj.git" becomes "https://gitlab.com/group/proj".
func CleanRemote(remote string) string {
	if remote == "" {
		return ""
	}
	if !strings.Contains(remote, "://") {
		if at := strings.Index(remote, "@"); at >= 0 {
			remote = remote[at+1:]
		}
		host, path, ok := strings.Cut(remote, ":")
		if !ok {
			return ""
		}
		return "https://" + host + "/" + strings.TrimSuffix(path, ".git")
	}
	u, err := url.Parse(remote)
	if err != nil {
		return ""
	}
	u.User = nil
	if u.Scheme == "ssh" || u.Scheme == "git" {
		u.Scheme = "https"
		u.Host = u.Hostname()
	}
	u.Path = strings.TrimSuffix(u.Path, ".git")
	return u.String()
}

// ParseEpoch parses SOURCE_DATE_EPOCH (seconds) or CI_COMMIT_TIMESTAMP (RFC 3339).
func ParseEpoch(s string) (time.Time, error) {
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(sec, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("epoch %q: want seconds since 1970 or an RFC 3339 time", s)
	}
	return t.UTC(), nil
}
