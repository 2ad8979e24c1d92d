//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/test/tokenauth"
)

// TestRateLimitedFanOut: five by-digest jobs at once and their merge, through a registry
// front that answers every third request 429 Retry-After: 1, publish the index a single
// push makes; each run reports its retries and the time it waited. Token auth with
// GitLab's five-minute tokens: a token that expires every 8 requests while requests wait
// out 429s is refused again after the one renewal a request gets (a request waits longer
// than such a token lives), which says nothing about a real registry.
func TestRateLimitedFanOut(t *testing.T) {
	s := suiteFor(t)
	r := s.startAuthRegistry(t, registryImpls[1], authToken, authRegistryOptions{Every: rateLimitEvery, Lifetime: 5 * time.Minute, Uses: -1})
	t.Cleanup(func() {
		if t.Failed() {
			var keys []string
			for _, in := range r.Proxy.Stats().Injected {
				keys = append(keys, in.Key)
			}
			t.Logf("429s injected, in order: %s", strings.Join(keys, " | "))
		}
	})
	dir := s.exampleDir(t)
	base := r.ref(baseRepo + ":" + baseTag)
	all := platformList(targets)
	env := func(t *testing.T, extra ...string) []string {
		return s.helperbuildEnv(t, append(r.ciEnv(), extra...)...)
	}
	var single string
	var outputs []result
	s.mustStep(t, "single push through the rate limit", func(t *testing.T) {
		md := metadataPath(t)
		res := s.mustHelperbuild(t, dir, env(t), "push", "--platforms", all, "--base", base, "--ldflags", exampleLdflags,
			"--tag", r.ref(jobProject+"/single:"+exampleVersion), "--metadata-file", md, helperPackage)
		outputs = append(outputs, res)
		single = readMetadata(t, md).image(t, "").Digest
		assertRetriesReported(t, res)
	})
	s.step(t, "five by-digest jobs at once and the merge: the single push's index", func(t *testing.T) {
		before := r.counts()
		parts := t.TempDir()
		ref := r.ref(jobProject + "/fanout:" + exampleVersion)
		results := make([]result, len(targets))
		var wg sync.WaitGroup
		for i, tg := range targets {
			// The Go build cache is shared (the jobs' compiles are not the point here;
			// TestFanOutRelease gives each its own); helperbuild's cache is each job's.
			e := env(t, fmt.Sprintf("CI_JOB_ID=%d", 4000+i))
			cache := t.TempDir()
			wg.Go(func() {
				results[i] = s.helperbuild(t, dir, e, "push", "--by-digest", "--part-file", filepath.Join(parts, fmt.Sprintf("%d.json", i)),
					"--platforms", tg.Platform, "--release-platforms", all, "--base", base, "--ldflags", exampleLdflags,
					"--tag", ref, "--cache-dir", cache, helperPackage)
			})
		}
		wg.Wait()
		for i, res := range results {
			require.Zero(t, res.ExitCode, "job %s:\n%s", targets[i].Platform, res)
			outputs = append(outputs, res)
		}
		md := metadataPath(t)
		res := s.mustHelperbuild(t, dir, env(t), "merge", "--metadata-file", md, parts)
		outputs = append(outputs, res)
		assert.Equal(t, single, readMetadata(t, md).image(t, "").Digest, "index digest of the rate-limited fan-out")
		c := r.counts().minus(before)
		assert.Positive(t, c.TooMany, "the front answered 429s")
		var waited []string
		for _, res := range outputs[1:] {
			waited = append(waited, waitedTotal(res.Stderr))
		}
		t.Logf("fan-out + merge through the rate limit: %s; waited per run: %s", c, strings.Join(waited, ", "))
	})
	s.step(t, "no job token or token in any output", func(t *testing.T) {
		for _, res := range outputs {
			assertNoSecret(t, res, r.secrets()...)
		}
		assert.NotContains(t, r.secrets(), tokenauth.CIJobUser, "the user name is not a secret")
	})
}

// rateLimitEvery: the front answers every rateLimitEvery-th request 429.
const rateLimitEvery = 3

var waitedLine = regexp.MustCompile(`msg="waited before retrying" total=(\S+)`)

// waitedTotal is the time a run said it waited before retrying ("0s" when it said nothing).
func waitedTotal(stderr string) string {
	if m := waitedLine.FindStringSubmatch(stderr); m != nil {
		return m[1]
	}
	return "0s"
}

// assertRetriesReported checks a run met 429s and said so: retries per host and the time
// waited.
func assertRetriesReported(t *testing.T, res result) {
	t.Helper()
	assert.Contains(t, res.Stderr, `msg="registry retries, every request to the host together"`, "retries reported:\n%s", res.Stderr)
	assert.Regexp(t, waitedLine, res.Stderr, "time waited reported")
	t.Logf("single push: %s", waitedTotal(res.Stderr))
}
