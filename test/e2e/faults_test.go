//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/test/faultproxy"
)

// TestPushThroughFaults puts the deterministic fault proxy between
// helperbuild and the real docker-registry. Transient faults (5xx, 429 with
// Retry-After, resets mid-blob, truncated bodies, slow answers) must not
// change the outcome: the push succeeds with the digest of a fault-free
// push. A persistent fault on manifest PUTs must fail the push clearly and
// leave the previous release under the tag. It prints one row per run.
func TestPushThroughFaults(t *testing.T) {
	s := suiteFor(t)
	base := s.plain.ref(baseRepo + ":" + baseTag)
	env := s.helperbuildEnv(t)
	const repo = "e2e/faults"
	var want string
	var rows []string
	row := func(run string, st faultproxy.Stats, retries int, outcome, before, after string) {
		rows = append(rows, fmt.Sprintf("%-22s %8d %8d %8d  %-40s %-14s %-14s", run, st.Requests, len(st.Injected), retries, outcome, before, after))
	}
	tagOf := func(r *registry, tag string) string {
		res := tryInspectRaw(t, s.plain, s.plain.ref(repo+":"+tag))
		if res.ExitCode != 0 {
			return "(none)"
		}
		_, d := inspectRaw(t, s.plain, s.plain.ref(repo+":"+tag))
		return d.String()[:19]
	}

	s.mustStep(t, "a fault-free push gives the reference digest", func(t *testing.T) {
		img := s.configFreePush(t, s.plain, base, repo, "clean", env)
		want = img.Digest.String()
	})

	for _, seed := range []int64{1, 2, 3} {
		s.step(t, fmt.Sprintf("transient faults, seed %d", seed), func(t *testing.T) {
			p, err := faultproxy.Start(faultproxy.Options{Target: s.plain.baseURL(), Seed: seed, Rate: 0.3,
				Faults: []faultproxy.Fault{faultproxy.Status5xx, faultproxy.TooMany, faultproxy.ResetMidBody, faultproxy.Truncate, faultproxy.Slow}})
			require.NoError(t, err)
			defer p.Close()
			via := *s.plain
			via.Host = p.Addr()
			tag := fmt.Sprintf("seed-%d", seed)
			before := tagOf(s.plain, tag)
			img := s.configFreePush(t, &via, base, repo, tag, env, "--retries", "6", "--timeout", "5s", "-v") // -v: a line per retry
			assert.Equal(t, want, img.Digest.String(), "same index digest as the fault-free push")
			retries := strings.Count(img.Output.Stderr, `msg="retrying request"`) + strings.Count(img.Output.Stderr, `msg="restarting blob upload"`)
			assert.NotEmpty(t, p.Stats().Injected, "the proxy injected faults")
			row(tag, p.Stats(), retries, "pushed, same digest", before, tagOf(s.plain, tag))
		})
	}

	s.step(t, "a persistent fault fails the push and moves no tag", func(t *testing.T) {
		p, err := faultproxy.Start(faultproxy.Options{Target: s.plain.baseURL(), Seed: 9, Rate: 1, Persistent: true,
			Faults: []faultproxy.Fault{faultproxy.Status5xx},
			Match: func(r *http.Request) bool {
				return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
			}})
		require.NoError(t, err)
		defer p.Close()
		via := *s.plain
		via.Host = p.Addr()
		before := tagOf(s.plain, "clean")
		// A different build (another version string) to the tag of the clean release.
		args := []string{"push", "-v", "--platforms", platformList(targets), "--base", base, "--retries", "2",
			"--ldflags", "-X example.com/gitlab-runner/common.VERSION=changed", "--tag", via.ref(repo + ":clean"), helperPackage}
		res := s.helperbuild(t, s.exampleDir(t), env, args...)
		assert.Equal(t, 1, res.ExitCode, "%s", res)
		lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		last := lines[len(lines)-1]
		// A platform's manifest is put once its image is built: the line names it.
		assert.Regexp(t, `^helperbuild: image \S+ for linux/\S+: push `, last)
		assert.Contains(t, last, "faultproxy: injected 50", "the error names what the registry answered")
		after := tagOf(s.plain, "clean")
		assert.Equal(t, before, after, "the previous release stays under the tag")
		row("persistent 5xx on PUT", p.Stats(), strings.Count(res.Stderr, `msg="retrying request"`), "failed, exit 1", before, after)
	})

	t.Logf("\n%-22s %8s %8s %8s  %-40s %-14s %-14s\n%s", "run", "requests", "faults", "retries", "outcome", "tag before", "tag after",
		strings.Join(rows, "\n"))
}
