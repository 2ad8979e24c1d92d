//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFanOutRelease releases the example recipe as GitLab CI would on five runners: five
// `push --by-digest` processes at once, one platform each, each with a Go build cache and a
// helperbuild cache of its own, then one `merge` of their part files. The indexes and tags
// are those a single push of the same commit wrote (TestRecipePush's release). Before the
// merge: a missing part and a part of another commit are refused, and nothing is tagged.
// The same for the config-free helper: five jobs given --release-platforms, one merge
// without --platforms, the digest of the single config-free push, attestations included.
func TestFanOutRelease(t *testing.T) {
	s := suiteFor(t)
	var rel pushedRecipe
	s.mustStep(t, "single push", func(t *testing.T) { rel = s.recipeRelease(t) })
	dir := s.exampleDir(t)
	// Every request of the jobs and merges goes through the proxy, so the parts name its host.
	proxy := startCountingProxy(t, s.plain)
	prefix := proxy.Host + "/fanout"
	images := []string{"gitlab-runner-helper", "gitlab-runner"}
	partsDir := filepath.Join(t.TempDir(), "parts")
	require.NoError(t, os.MkdirAll(partsDir, 0o755))
	parts := make([]string, len(targets))

	s.mustStep(t, "five push --by-digest jobs at once, each with its own caches", func(t *testing.T) {
		results := make([]result, len(targets))
		var wg sync.WaitGroup
		for i, tg := range targets {
			parts[i] = filepath.Join(partsDir, fmt.Sprintf("%d.json", 1000+i))
			env := s.helperbuildEnv(t, "GOCACHE="+t.TempDir(), fmt.Sprintf("CI_JOB_ID=%d", 1000+i), "CI_JOB_NAME=build: ["+tg.Platform+"]")
			cache := t.TempDir()
			wg.Go(func() {
				results[i] = s.helperbuild(t, dir, env, "push", "--by-digest", "--part-file", parts[i],
					"--config", e2eConfig, "--repo", prefix, "--platforms", tg.Platform, "--cache-dir", cache)
			})
		}
		wg.Wait()
		for i, res := range results {
			require.Zero(t, res.ExitCode, "job %s:\n%s", targets[i].Platform, res)
			assert.NotContains(t, res.Stderr, "msg=tagged", "a by-digest job tags nothing")
		}
		for _, img := range images {
			assert.Empty(t, tagsOf(t, s.plain, "fanout/"+img), "tags of fanout/%s after the jobs", img)
		}
	})

	s.step(t, "one part missing: exit 1, one line, nothing tagged", func(t *testing.T) {
		res := s.helperbuild(t, dir, s.helperbuildEnv(t), append([]string{"merge"}, parts[:4]...)...)
		assert.Equal(t, 1, res.ExitCode, "%s", res)
		assert.Equal(t, 1, strings.Count(res.Stderr, "\n"), "one line:\n%s", res.Stderr)
		assert.Contains(t, res.Stderr, "linux/s390x is missing")
		for _, img := range images {
			assert.Empty(t, tagsOf(t, s.plain, "fanout/"+img), "tags of fanout/%s", img)
		}
	})

	s.step(t, "parts of two commits: refused, nothing tagged", func(t *testing.T) {
		// The same example one commit later, its linux/amd64 job.
		next := filepath.Join(t.TempDir(), "example")
		mustRun(t, command(t, nil, "cp", "-a", dir, next))
		env := fixedGitEnv("2025-01-03T03:04:05Z")
		mustRun(t, command(t, env, "git", "-C", next, "commit", "-q", "--allow-empty", "-m", "next"))
		other := filepath.Join(t.TempDir(), "next-amd64.json")
		s.mustHelperbuild(t, next, s.helperbuildEnv(t, "CI_JOB_ID=2000", "CI_JOB_NAME=build: [linux/amd64]"),
			"push", "--by-digest", "--part-file", other, "--config", e2eConfig, "--repo", prefix, "--platforms", "linux/amd64")
		res := s.helperbuild(t, dir, s.helperbuildEnv(t), append([]string{"merge", other}, parts[1:]...)...)
		assert.Equal(t, 1, res.ExitCode, "%s", res)
		assert.Equal(t, 1, strings.Count(res.Stderr, "\n"), "one line:\n%s", res.Stderr)
		assert.Contains(t, res.Stderr, "parts were built from different revisions")
		assert.Contains(t, res.Stderr, `next-amd64.json (job 2000 "build: [linux/amd64]")`)
		for _, img := range images {
			assert.Empty(t, tagsOf(t, s.plain, "fanout/"+img), "tags of fanout/%s", img)
		}
	})

	s.step(t, "merge: the same indexes and tags as the single push", func(t *testing.T) {
		md := metadataPath(t)
		res := s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "merge", "--config", e2eConfig, "--metadata-file", md, partsDir)
		merged := readMetadata(t, md)
		for _, img := range images {
			want, got := rel.Meta.image(t, img), merged.image(t, img)
			assert.Equal(t, want.Digest, got.Digest, "index digest of %s", img)
			assert.Contains(t, res.Stdout, prefix+"/"+img+"@"+want.Digest)
			single := strings.TrimPrefix(rel.Prefix, s.plain.Host+"/") + "/" + img
			wantTags := listTags(t, s.plain, single)
			require.NotEmpty(t, wantTags)
			assert.Equal(t, wantTags, listTags(t, s.plain, "fanout/"+img), "tags of %s", img)
			for _, tag := range wantTags {
				_, w := inspectRaw(t, s.plain, s.plain.ref(single+":"+tag))
				_, g := inspectRaw(t, s.plain, s.plain.ref("fanout/"+img+":"+tag))
				assert.Equal(t, w, g, "%s:%s", img, tag)
			}
		}
	})

	s.step(t, "config-free: five jobs naming the release, merged without --platforms, give the single push's index", func(t *testing.T) {
		single := s.plainHelper(t) // push of all five platforms, attestations on (the default)
		raw, _ := inspectRaw(t, s.plain, single.ref())
		attestations := 0
		for _, m := range parseIndex(t, raw).Manifests {
			if m.Platform != nil && m.Platform.OS == "unknown" {
				attestations++
			}
		}
		require.Equal(t, len(targets), attestations, "the single push's index holds every platform's attestation")
		cfParts := filepath.Join(t.TempDir(), "parts")
		require.NoError(t, os.MkdirAll(cfParts, 0o755))
		ref := s.plain.ref("fanout-cf/helper:" + exampleVersion)
		for i, tg := range targets {
			s.mustHelperbuild(t, dir, s.helperbuildEnv(t, fmt.Sprintf("CI_JOB_ID=%d", 3000+i), "CI_JOB_NAME=build: ["+tg.Platform+"]"),
				"push", "--by-digest", "--part-file", filepath.Join(cfParts, fmt.Sprintf("%d.json", 3000+i)),
				"--platforms", tg.Platform, "--release-platforms", platformList(targets), "--base", s.plain.ref(baseRepo+":"+baseTag),
				"--ldflags", exampleLdflags, "--tag", ref, "--cache-dir", t.TempDir(), helperPackage)
		}
		assert.Empty(t, tagsOf(t, s.plain, "fanout-cf/helper"), "the jobs tag nothing")
		md := metadataPath(t)
		s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "merge", "--metadata-file", md, cfParts)
		assert.Equal(t, single.Digest.String(), readMetadata(t, md).image(t, "").Digest, "index digest of the config-free fan-out")
		_, got := inspectRaw(t, s.plain, ref)
		assert.Equal(t, single.Digest, got, "%s", ref)
	})

	s.step(t, "merge under another repository mounts the layers and downloads none", func(t *testing.T) {
		layers := map[string]bool{}
		for _, img := range images {
			raw, _ := inspectRaw(t, s.plain, s.plain.ref("fanout/"+img+":"+exampleVersion))
			for _, m := range parseIndex(t, raw).Manifests {
				// Merge reads each attestation's statement to check its subject
				// (BuildKit's form has no subject field); an image layer, never.
				if m.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
					continue
				}
				mraw, _ := inspectRaw(t, s.plain, s.plain.ref("fanout/"+img+"@"+m.Digest.String()))
				for _, l := range parseManifest(t, mraw).Layers {
					layers[l.Digest.String()] = true
				}
			}
		}
		before, mountsBefore := len(proxy.all()), proxy.mountRequests()
		md := metadataPath(t)
		s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "merge", "--repo", proxy.Host+"/moved", "--metadata-file", md, partsDir)
		requests := proxy.all()[before:]
		for _, r := range requests {
			method, path, _ := strings.Cut(r, " ")
			if i := strings.Index(path, "/blobs/sha256:"); i >= 0 && method == "GET" {
				assert.False(t, layers[path[i+len("/blobs/"):]], "merge downloaded a layer: %s", r)
			}
		}
		assert.Positive(t, proxy.mountRequests()-mountsBefore, "layers mounted from fanout/")
		for _, img := range images {
			assert.Equal(t, rel.Meta.image(t, img).Digest, readMetadata(t, md).image(t, img).Digest, "index digest of moved/%s", img)
		}
		t.Logf("requests of the merge under another repository: %d", len(requests))
	})
}

// tagsOf lists repo's tags in r with the distribution API: none when the registry knows no
// tag of it (docker-registry then answers NAME_UNKNOWN, though the repository holds the
// manifests pushed by digest, and skopeo list-tags fails without saying "unknown").
func tagsOf(t *testing.T, r *registry, repo string) []string {
	t.Helper()
	resp, err := r.httpClient().Get(r.baseURL() + "/v2/" + repo + "/tags/list")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Tags   []string
		Errors []struct{ Code string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	if resp.StatusCode == http.StatusNotFound && len(body.Errors) == 1 && body.Errors[0].Code == "NAME_UNKNOWN" {
		return nil
	}
	require.Equal(t, http.StatusOK, resp.StatusCode, "tags of %s: %+v", repo, body)
	return body.Tags
}
