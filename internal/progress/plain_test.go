package progress

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, string(want), got)
}

func runPlain(gitlab bool, err error) string {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewPlain(&b, gitlab), c.now)
	pushScript(c, rep, 0)
	rep.Close(err)
	return b.String()
}

// TestPlainGolden: a push of two images × five platforms, as a CI log
// without GitLab's sections: one start line, a line per platform compiled
// and per image × platform done (12-hex digests, no paths), one per phase
// end with its time, the retry; at most 25 lines.
func TestPlainGolden(t *testing.T) {
	got := runPlain(false, nil)
	golden(t, "plain.golden", got)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	assert.LessOrEqual(t, len(lines), 25)
	assert.NotContains(t, got, "\x1b")
	for _, l := range lines {
		assert.NotRegexp(t, `sha256:[0-9a-f]{13}`, l, "a full digest")
	}
	assert.Contains(t, got, `level=WARN msg="retrying request" method=PATCH`)
}

// TestPlainGitLabGolden: with GITLAB_CI each phase is a collapsed section
// (names of [a-zA-Z0-9_.-], the unix time of the clock), every section is
// closed, the start line is outside them.
func TestPlainGitLabGolden(t *testing.T) {
	got := runPlain(true, nil)
	golden(t, "plain-gitlab.golden", got)
	assert.Equal(t, 3, strings.Count(got, "section_start:"))
	assert.Equal(t, 3, strings.Count(got, "section_end:"))
	assert.True(t, strings.HasPrefix(got, "helperbuild push: "), "the start line comes before any section")
	assert.Contains(t, got, "\x1b[0Ksection_start:1764612000:resolve[collapsed=true]\r\x1b[0Kresolve: base images and registry access\n")
	assert.Regexp(t, `section_end:\d+:publish\r\x1b\[0K\n$`, got, "the last line closes the last section")
}

// TestPlainGitLabFailure: a run that fails mid-phase closes its section, so
// the error the command prints next is outside every section.
func TestPlainGitLabFailure(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewPlain(&b, true), c.now)
	pushScript(c, rep, 5)
	rep.Event(Event{Kind: KindStage, Image: "gitlab-runner", Platform: "linux/arm64", Stage: Failed, Message: "verify: 1 check failed\ndetails"})
	rep.Close(errors.New("image gitlab-runner: 1 check failed"))
	got := b.String()
	assert.Equal(t, strings.Count(got, "section_start:"), strings.Count(got, "section_end:"))
	assert.Contains(t, got, "gitlab-runner linux/arm64 failed: verify: 1 check failed\n")
	assert.True(t, strings.HasSuffix(got, ":build\r\x1b[0K\n"))
}

func TestSectionNameIsSafe(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewPlain(&b, true), c.now)
	rep.Event(Event{Kind: KindPhaseStart, Phase: "push images/linux:arm", Message: "x"})
	rep.Event(Event{Kind: KindPhaseEnd, Phase: "push images/linux:arm"})
	rep.Close(nil)
	assert.Contains(t, b.String(), ":push_images_linux_arm[collapsed=true]")
	assert.Contains(t, b.String(), "section_end:1764612000:push_images_linux_arm\r")
}

// TestQuiet: nothing on success, even with a retry; on failure the
// retries, warnings and failed platforms.
func TestQuiet(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewQuiet(&b), c.now)
	pushScript(c, rep, 0)
	rep.Event(Event{Kind: KindLog, Level: "WARN", Message: "cache prune", Fields: []Field{{Key: "error", Value: "permission denied"}}})
	rep.Close(nil)
	assert.Empty(t, b.String())

	b.Reset()
	rep = NewReporter(NewQuiet(&b), c.now)
	pushScript(c, rep, 8)
	rep.Event(Event{Kind: KindLog, Level: "INFO", Message: "layer written"})
	rep.Event(Event{Kind: KindStage, Image: "gitlab-runner", Platform: "linux/s390x", Stage: Failed, Message: "upload: denied"})
	rep.Close(errors.New("denied"))
	assert.Equal(t, "level=WARN msg=\"retrying request\" method=PATCH url=http://localhost:5000/v2/group/gitlab-runner/blobs/uploads/1 reason=\"503 Service Unavailable\" attempt=1/5 wait=1s\n"+
		"gitlab-runner linux/s390x failed: upload: denied\n", b.String())
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "sha256:0123456789ab", ShortDigest("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	assert.Equal(t, "abc", ShortDigest("abc"))
	assert.Equal(t, "0123456789ab", ShortHex("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	assert.Equal(t, "0123456789ab", ShortHex("0123456789abcdef"), "no algorithm: still 12 digits")
	assert.Equal(t, "abc", ShortHex("sha512:abc"))
	assert.Equal(t, "1023 B", Size(1023))
	assert.Equal(t, "1.0 KiB", Size(1024))
	assert.Equal(t, "762.9 KiB", Size(781_234))
	assert.Equal(t, "11.8 MiB", Size(12_345_678))
	// The summary's sizes (moved from the command's TestHumanSize).
	for n, want := range map[int64]string{0: "0 B", 1536: "1.5 KiB", 816348: "797.2 KiB", 48 << 20: "48.0 MiB", 3 << 30: "3.0 GiB"} {
		assert.Equal(t, want, Size(n), "%d", n)
	}
	assert.Equal(t, "0.4s", Duration(400_000_000))
	assert.Equal(t, "1m02s", Duration(62_000_000_000))
	assert.Equal(t, "abcd…", clip("abcdefgh", 5))
	assert.Equal(t, "abc", clip("abc", 5))
}

// TestPlainFailedInputs: a run that fails before its first phase ends (a
// base without the platform, a registry that refuses) prints no start
// line: the command's one error line is all, with any retry before it.
func TestPlainFailedInputs(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewPlain(&b, true), c.now)
	rep.Event(Event{Kind: KindStart, Message: "helperbuild build", Images: []string{"app"}})
	rep.Event(Event{Kind: KindPhaseStart, Phase: "resolve", Message: "resolve"})
	rep.Event(Event{Kind: KindRetry, Level: "WARN", Message: "retrying request"})
	rep.Close(errors.New("base has no linux/arm64"))
	assert.Equal(t, "level=WARN msg=\"retrying request\"\n", b.String())
}

// TestPlainRetriesAtOnce: a retry or warning during resolve is printed
// the moment it comes, not when resolve ends (a slow, flaky registry would
// otherwise show nothing for its whole retry budget); the start line still
// waits for resolve to end, and then nothing is printed twice.
func TestPlainRetriesAtOnce(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewPlain(&b, false), c.now)
	rep.Event(Event{Kind: KindStart, Message: "helperbuild push", Images: []string{"app"}, Platforms: []string{"linux/amd64"}})
	rep.Event(Event{Kind: KindPhaseStart, Phase: "resolve"})
	rep.Event(Event{Kind: KindLog, Level: "INFO", Message: "resolving base"})
	assert.Empty(t, b.String(), "a detail waits for resolve")
	rep.Event(Event{Kind: KindRetry, Level: "WARN", Message: "retrying request", Fields: []Field{{Key: "attempt", Value: "1"}}})
	assert.Equal(t, "level=WARN msg=\"retrying request\" attempt=1\n", b.String())
	c.advance(30 * time.Second)
	rep.Event(Event{Kind: KindLog, Level: "WARN", Message: "registry slow"})
	assert.Equal(t, "level=WARN msg=\"retrying request\" attempt=1\nlevel=WARN msg=\"registry slow\"\n", b.String())
	rep.Event(Event{Kind: KindPhaseEnd, Phase: "resolve", Message: "1 platform"})
	rep.Close(nil)
	assert.Equal(t, "level=WARN msg=\"retrying request\" attempt=1\n"+
		"level=WARN msg=\"registry slow\"\n"+
		"helperbuild push: 1 image (app) × 1 platform (linux/amd64)\n"+
		"level=INFO msg=\"resolving base\"\n"+
		"resolve done in 30.0s: 1 platform\n", b.String())
}

// TestPlainRefusedInputsOneLine: a run refused on its inputs with no retry
// or warning prints nothing: the command's error line is its only line.
func TestPlainRefusedInputsOneLine(t *testing.T) {
	for _, gitlab := range []bool{false, true} {
		var b bytes.Buffer
		c := newClock()
		rep := NewReporter(NewPlain(&b, gitlab), c.now)
		rep.Event(Event{Kind: KindStart, Message: "helperbuild build", Images: []string{"app"}})
		rep.Event(Event{Kind: KindPhaseStart, Phase: "resolve", Message: "resolve"})
		rep.Close(errors.New("base has no linux/arm64"))
		assert.Empty(t, b.String(), "gitlab=%v", gitlab)
	}
}

// TestPlainConfigFreePlatforms: a config-free run learns its platforms
// from its base; the start line, printed once the resolve phase ended,
// names them.
func TestPlainConfigFreePlatforms(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewPlain(&b, false), c.now)
	rep.Event(Event{Kind: KindStart, Message: "helperbuild push", Images: []string{"app"}, Binaries: []string{"./cmd/app"}, Destination: "r/app:v1"})
	rep.Event(Event{Kind: KindPhaseStart, Phase: "resolve"})
	rep.Event(Event{Kind: KindPhaseEnd, Phase: "resolve", Message: "1 base image pinned, 2 platforms", Platforms: []string{"linux/amd64", "linux/arm64"}})
	assert.Equal(t, "helperbuild push: 1 image (app) × 2 platforms (linux/amd64, linux/arm64), 1 binary (./cmd/app) → r/app:v1\n"+
		"resolve done in 0.0s: 1 base image pinned, 2 platforms\n", b.String())
}

// TestStartLineWithoutPlatforms: a run whose platforms are not listed
// says what decides them; an index has no base (issue 39: it said "every
// platform the base offers").
func TestStartLineWithoutPlatforms(t *testing.T) {
	e := Event{Kind: KindStart, Message: "helperbuild build", Images: []string{"app"}}
	assert.Equal(t, "helperbuild build: 1 image (app) × every platform the base offers", StartLine(e))
	e.Message, e.AllPlatforms = "helperbuild index", "every platform of the sources"
	assert.Equal(t, "helperbuild index: 1 image (app) × every platform of the sources", StartLine(e))
}
