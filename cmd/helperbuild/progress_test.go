package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/progress"
)

// pushExample pushes the bundled example (two images × five platforms) to
// a fresh in-process registry with args added, and returns the registry's
// host and stderr.
func pushExample(t *testing.T, env []string, args ...string) (host, stderr string) {
	t.Helper()
	t.Chdir(exampleDir(t))
	host = testkit.Registry(t)
	args = append(append([]string{"push", "--repo", host + "/group"}, exampleArgs...), args...)
	code, _, stderr := run(t, baseEnv(env...), args...)
	require.Equal(t, 0, code, stderr)
	return host, stderr
}

// normalized is plain progress with what changes from run to run made
// fixed: the registry's address, times, digests, sizes, and the order of
// the lines of the build phase (platforms finish in any order).
func normalized(stderr, host string) string {
	s := strings.ReplaceAll(stderr, host, "REGISTRY")
	for _, r := range []struct{ re, to string }{
		{`\d+(\.\d)?s\b|\d+m\d\ds\b`, "T"},
		{`(section_(start|end)):\d+:`, "$1:UNIX:"},
		{`sha256:[0-9a-f]{12}\b`, "sha256:DIGEST"},
		{`\d+(\.\d)? ([KMG]i)?B\b`, "SIZE"},
		// Which unit writes a layer two images share first (new) and which
		// finds it in the layer cache (reused) depends on timing.
		{` \((all new|all reused|\d+ new, \d+ reused)\)`, " (NEW/REUSED)"},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.to)
	}
	lines := strings.Split(s, "\n")
	from := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "compiled ") || strings.HasPrefix(l, "cached ") })
	to := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "build done in ") })
	if from > 0 && to > from {
		slices.Sort(lines[from:to])
	}
	return strings.Join(lines, "\n")
}

// TestPlainProgressOfTheExample: the example's push as a CI log, without
// and with GitLab's sections: at most 25 lines, short digests, no cache
// path; -v brings back every detail (the logfmt lines, full digests).
func TestPlainProgressOfTheExample(t *testing.T) {
	for _, tt := range []struct {
		name   string
		env    []string
		golden string
	}{
		{"plain", nil, "push-plain.golden"},
		{"gitlab", []string{"GITLAB_CI=true"}, "push-plain-gitlab.golden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			goldenPath, err := filepath.Abs(filepath.Join("testdata", tt.golden))
			require.NoError(t, err)
			// A cache of its own: the binaries are compiled whatever ran before.
			host, stderr := pushExample(t, tt.env, "--progress", "plain", "--cache-dir", t.TempDir())
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			assert.LessOrEqual(t, len(lines), 25, stderr)
			assert.NotContains(t, stderr, cacheRoot)
			assert.NotRegexp(t, `sha256:[0-9a-f]{13}`, stderr)
			golden(t, goldenPath, normalized(stderr, host))
		})
	}
	t.Run("verbose", func(t *testing.T) {
		_, stderr := pushExample(t, nil, "--progress", "plain", "-v", "--platforms", "linux/amd64,linux/arm64")
		for _, detail := range []string{`msg="layer written"`, `msg="image assembled"`, `msg="platform verified"`, `msg=compiled`, `msg=tagged`, `msg=pushed`} {
			assert.Contains(t, stderr, detail)
		}
		assert.Regexp(t, `digest=sha256:[0-9a-f]{64}`, stderr)
	})
}

// TestProgressJSONOfAPush: the events of the example's push (two of its
// platforms): every image ×
// platform goes waiting, compiling, writing layer, checking, done in that
// order, sends bytes to the registry (counted as they go out), and the
// three phases start and end.
func TestProgressJSONOfAPush(t *testing.T) {
	_, stderr := pushExample(t, nil, "--progress", "json", "--platforms", "linux/amd64,linux/arm64")
	stages := map[string][]progress.Stage{}
	sent := map[string]int64{}
	var phases []string
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		var e progress.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
		key := e.Image + " " + e.Platform
		switch e.Kind {
		case progress.KindStage:
			if s := stages[key]; len(s) == 0 || s[len(s)-1] != e.Stage {
				stages[key] = append(s, e.Stage)
			}
			if e.Stage == progress.Done {
				sent[key] = e.Bytes
				assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, e.Digest)
				assert.Positive(t, e.Total)
			}
		case progress.KindPhaseStart, progress.KindPhaseEnd:
			phases = append(phases, string(e.Kind)+" "+e.Phase)
		}
	}
	assert.Equal(t, []string{"phase-start resolve", "phase-end resolve", "phase-start build", "phase-end build", "phase-start publish", "phase-end publish"}, phases)
	require.Len(t, stages, 4)
	order := []progress.Stage{progress.Waiting, progress.Compiling, progress.Writing, progress.Checking, progress.Uploading, progress.Done}
	for key, got := range stages {
		// Every stage, in order (uploading is skipped by a platform whose
		// layers all went up while they were written).
		last := -1
		for _, s := range got {
			i := slices.Index(order, s)
			if s == progress.Waiting && last >= 1 {
				continue // compiled, waiting for a slot to write layers
			}
			assert.Greater(t, i, last, "%s: %v", key, got)
			last = i
		}
		assert.Equal(t, progress.Done, got[len(got)-1], key)
		assert.Positive(t, sent[key], "%s sent bytes", key)
	}
}

// TestNoOpPushSaysWhatHappened: the same push run twice with one cache and
// one registry. The first compiles every binary and uploads; the re-run
// says what it did not do (issue 25: it said "compiled … 2 binaries",
// "2 new layers"): go's cache had every binary, every layer was reused and
// nothing was uploaded.
func TestNoOpPushSaysWhatHappened(t *testing.T) {
	t.Chdir(exampleDir(t))
	host, cache := testkit.Registry(t), t.TempDir()
	push := func() string {
		args := append([]string{"push", "--repo", host + "/group", "--progress", "plain", "--cache-dir", cache,
			"--platforms", "linux/amd64,linux/arm64"}, exampleArgs...)
		code, _, stderr := run(t, baseEnv(), args...)
		require.Equal(t, 0, code, stderr)
		return stderr
	}
	first := push()
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		assert.Regexp(t, `(?m)^compiled `+p+`: 2 binaries in \S+$`, first)
	}
	assert.Regexp(t, `(?m)^build done in \S+: 4 binaries, 2 images built and checked, 6 layers \((all new|\d new, \d reused)\), \S+ \S+ uploaded$`, first)
	assert.NotContains(t, first, "nothing uploaded")

	again := push()
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		assert.Regexp(t, `(?m)^cached `+p+`: 2 binaries \(all up to date in go's cache\) in \S+$`, again)
		assert.Regexp(t, `(?m)^gitlab-runner `+p+` sha256:[0-9a-f]{12} \S+ \S+, 2 layers \(all reused\), nothing uploaded \(the registry had every blob\)$`, again)
		assert.Regexp(t, `(?m)^gitlab-runner-helper `+p+` sha256:[0-9a-f]{12} \S+ \S+, 1 layer \(all reused\), nothing uploaded \(the registry had every blob\)$`, again)
	}
	assert.Regexp(t, `(?m)^build done in \S+: 4 binaries \(all up to date in go's cache\), 2 images built and checked, 6 layers \(all reused\), nothing uploaded \(the registry had every blob\)$`, again)
	assert.NotContains(t, again, "compiled ")
	assert.NotContains(t, again, " new")
}
