//go:build e2e

package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgressOnATerminal runs the example's push in tmux, as a person sees
// it, at 100×30 and at 60×20: mid-run (while the registry holds every blob
// upload) the live table has one row per image × platform, some still
// writing or uploading, no line wider than the pane and no frame left
// behind; at the end the table stays, every row done with its short
// digest, every phase ticked, the summary below it.
func TestProgressOnATerminal(t *testing.T) {
	s := suiteFor(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is missing: run scripts/install-test-deps.sh")
	}
	for _, size := range []struct{ width, height int }{{100, 30}, {60, 20}} {
		s.step(t, itoa(size.width)+"x"+itoa(size.height), func(t *testing.T) {
			gate := startGatingProxy(t, s.plain)
			repo := gate.Host + "/tty" + itoa(size.width)
			pane := startInTmux(t, size.width, size.height, s.exampleDir(t), s.helperbuildEnv(t),
				s.helperbuildBin, "push", "--progress", "tty", "--repo", repo)

			mid := pane.waitFor(t, "a row uploading while the registry holds the uploads", func(screen string) bool {
				return gate.held.Load() > 0 && strings.Contains(screen, "uploading")
			})
			t.Logf("mid-run at %dx%d:\n%s", size.width, size.height, mid)
			rows, phases := tableOf(t, mid, size.width)
			notDone := 0
			for _, r := range rows {
				if !strings.Contains(r, " done ") {
					notDone++
				}
			}
			assert.Positive(t, notDone, "some rows are still at work:\n%s", mid)
			assert.Contains(t, phases, "build ")
			assert.Contains(t, phases, "…", "the build phase still counts")

			gate.open()
			final := pane.waitFor(t, "helperbuild to exit", func(screen string) bool {
				return strings.Contains(screen, "helperbuild exit ")
			})
			t.Logf("final at %dx%d:\n%s", size.width, size.height, final)
			assert.Contains(t, final, "helperbuild exit 0")
			rows, phases = tableOf(t, final, size.width)
			for _, r := range rows {
				assert.Regexp(t, ` done [0-9a-f]{12}\b`, r)
			}
			assert.Regexp(t, `^resolve \S+ ✓ · build \S+ ✓ · publish \S+ ✓$`, phases)
			assert.Contains(t, final, repo+"/gitlab-runner-helper@sha256:", "the summary follows the table")
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// tableOf finds the one live table in screen (the pane and its history):
// its ten rows, in the example's order, and its phase line; no line is
// wider than the pane, and no earlier frame of the table is left.
func tableOf(t *testing.T, screen string, width int) (rows []string, phases string) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	for _, l := range lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), width, "a line wider than the pane: %q", l)
	}
	header := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "IMAGE ") {
			require.Equal(t, -1, header, "two table headers: a frame was left behind:\n%s", screen)
			header = i
		}
	}
	require.NotEqual(t, -1, header, "no table:\n%s", screen)
	require.Greater(t, len(lines), header+11, screen)
	require.True(t, strings.HasPrefix(lines[header-1], "helperbuild push: 2 images"), "the start line above the table: %q", lines[header-1])
	k := 0
	for _, img := range []string{"gitlab-runner-helper", "gitlab-runner"} {
		for _, p := range []string{"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"} {
			row := lines[header+1+k]
			require.Regexp(t, "^"+regexp.QuoteMeta(img)+` +`+regexp.QuoteMeta(p)+` `, row, "row %d of\n%s", k, screen)
			rows = append(rows, row)
			k++
		}
	}
	return rows, strings.TrimSpace(lines[header+11])
}

// gatingProxy is a reverse proxy in front of a registry that holds every
// blob upload (PATCH or PUT of an upload session) until open is called, so
// a test sees a push mid-run for as long as it needs.
type gatingProxy struct {
	Host string // "localhost:PORT"
	held atomic.Int64
	gate chan struct{}
	once sync.Once
}

func startGatingProxy(t *testing.T, r *registry) *gatingProxy {
	t.Helper()
	target, err := url.Parse(r.baseURL())
	require.NoError(t, err)
	g := &gatingProxy{gate: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if (req.Method == http.MethodPatch || req.Method == http.MethodPut) && blobUploadPath.MatchString(req.URL.Path) {
			g.held.Add(1)
			select {
			case <-g.gate:
			case <-req.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(g.open) // before the server closes: a held request ends
	g.Host = "localhost:" + strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	return g
}

func (g *gatingProxy) open() { g.once.Do(func() { close(g.gate) }) }

// tmuxPane is a program running in a detached tmux session on a server of
// its own (its own socket), so nothing else's tmux is touched.
type tmuxPane struct {
	socket, session string
	env             []string
}

// startInTmux runs argv in dir with env in a width×height pane; the pane
// stays after the program exits and shows "helperbuild exit N".
func startInTmux(t *testing.T, width, height int, dir string, env []string, argv ...string) *tmuxPane {
	t.Helper()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd " + shellQuote(dir) + " || exit 1\nenv -i")
	for _, kv := range env {
		b.WriteString(" " + shellQuote(kv))
	}
	for _, a := range argv {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\necho \"helperbuild exit $?\"\n")
	require.NoError(t, os.WriteFile(script, []byte(b.String()), 0o755))
	p := &tmuxPane{socket: filepath.Join(tmp, "tmux.sock"), session: "progress", env: []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "HOME=" + tmp}}
	p.tmux(t, "-f", "/dev/null", "new-session", "-d", "-s", p.session, "-x", itoa(width), "-y", itoa(height), script,
		";", "set-option", "-t", p.session, "remain-on-exit", "on")
	t.Cleanup(func() {
		// Our own server, on our own socket: ends the session and the program.
		cmd := exec.Command("tmux", "-S", p.socket, "kill-server")
		cmd.Env = p.env
		_ = cmd.Run()
	})
	return p
}

func (p *tmuxPane) tmux(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// capture is the pane with its history, trailing blank lines dropped.
func (p *tmuxPane) capture(t *testing.T) string {
	t.Helper()
	out := p.tmux(t, "capture-pane", "-p", "-S", "-", "-t", p.session)
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// waitFor polls the pane until cond holds, at most 6 minutes (a loaded
// machine compiles ten binaries first).
func (p *tmuxPane) waitFor(t *testing.T, what string, cond func(screen string) bool) string {
	t.Helper()
	var screen string
	for range 1440 {
		screen = p.capture(t)
		if cond(screen) {
			return screen
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("waited for %s; the pane shows:\n%s", what, screen)
	return ""
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
