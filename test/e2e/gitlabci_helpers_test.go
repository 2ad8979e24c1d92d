//go:build e2e && gitlabci

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// Helpers of the GitLab CI runs (gitlabci_test.go, gitlabci_project_test.go): gitlab-ci-local,
// the template without image: keys, and reading what a release published.

// requireGitLabCILocal fails unless gitlab-ci-local gitlabCILocalVersion and rsync are installed.
func requireGitLabCILocal(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"gitlab-ci-local", "rsync"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is missing: %s", tool, ciInstallHint)
	}
	res := sh(t, "gitlab-ci-local", "--version")
	require.Equal(t, gitlabCILocalVersion, strings.TrimSpace(res.Stdout), "gitlab-ci-local version: %s", ciInstallHint)
}

// withoutImageKeys returns the CI file with the image: key of every job removed (there is
// no container engine here; the shell executor runs jobs on the host), and the jobs named in
// drop too, and how many image: keys it removed. The spec header and every other key stay.
func withoutImageKeys(t *testing.T, raw []byte, drop ...string) ([]byte, int) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	removed := 0
	for docs := 0; ; docs++ {
		require.Less(t, docs, 10, "too many YAML documents in the template")
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			require.ErrorContains(t, err, "EOF")
			break
		}
		root := doc.Content[0]
		if mappingValue(root, "spec") == nil {
			for _, job := range drop {
				require.NotNil(t, mappingValue(root, job), "no job %s to drop", job)
				for i := 0; i+1 < len(root.Content); i += 2 {
					if root.Content[i].Value == job {
						root.Content = append(root.Content[:i], root.Content[i+2:]...)
						break
					}
				}
			}
			for i := 1; i < len(root.Content); i += 2 {
				job := root.Content[i]
				if job.Kind != yaml.MappingNode {
					continue
				}
				for k := 0; k+1 < len(job.Content); k += 2 {
					if job.Content[k].Value == "image" {
						job.Content = append(job.Content[:k], job.Content[k+2:]...)
						removed++
						break
					}
				}
			}
		}
		require.NoError(t, enc.Encode(&doc))
	}
	require.NoError(t, enc.Close())
	return out.Bytes(), removed
}

// ciRun is one gitlab-ci-local run: its result and the jobs it reported passed or failed.
type ciRun struct {
	result
	passed, failed []string
}

// runGitLabCILocal runs gitlab-ci-local with the shell executor in dir, each job in its
// own copy of it, with helperbuild's test environment, no colours and no Go module
// downloads; args are more of its arguments (jobs, --variable ...).
func runGitLabCILocal(t *testing.T, s *Suite, dir string, args ...string) ciRun {
	t.Helper()
	env := s.helperbuildEnv(t, "FORCE_COLOR=0", "NO_COLOR=1", "GOPROXY=off")
	argv := append([]string{"gitlab-ci-local", "--shell-isolation", "--shell-executor-no-image"}, args...)
	cmd := commandWithin(t, ciPipelineTimeout, env, argv...)
	cmd.Dir = dir
	r := ciRun{result: run(t, cmd)}
	// The summary: " PASS  example-build: [linux/amd64]", " FAIL  example-release", and
	// WARN for a job allowed to fail. WARN also starts gitlab-ci-local's own warnings, which
	// end with a full stop.
	summary := regexp.MustCompile(`^\s*(PASS|FAIL|WARN)\s+(\S.*?)\s*$`)
	for _, line := range strings.Split(r.Stdout, "\n") {
		m := summary.FindStringSubmatch(line)
		switch {
		case m == nil, strings.HasSuffix(m[2], "."):
		case m[1] == "PASS":
			r.passed = append(r.passed, m[2])
		default:
			r.failed = append(r.failed, m[2])
		}
	}
	t.Logf("passed: %q; failed: %q", r.passed, r.failed)
	return r
}

// readCIPart reads the part file a build job wrote (docs/fanout.md) and returns each image's
// manifest digest, checking that the part holds exactly the job's platform.
func readCIPart(t *testing.T, path, platform string) map[string]v1.Hash {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "part of %s", platform)
	var part struct {
		Images []struct {
			Name      string          `json:"name"`
			Manifests []v1.Descriptor `json:"manifests"`
		} `json:"images"`
	}
	require.NoError(t, json.Unmarshal(raw, &part), "part %s", path)
	require.NotEmpty(t, part.Images, "part %s", path)
	digests := map[string]v1.Hash{}
	for _, img := range part.Images {
		for _, m := range img.Manifests {
			switch platformOf(m) {
			case attestationPlatform:
			case platform:
				require.NotContains(t, digests, img.Name, "part %s, image %s: two manifests for %s", path, img.Name, platform)
				digests[img.Name] = m.Digest
			default:
				t.Fatalf("part %s, image %s: a manifest for %s in the job for %s", path, img.Name, platformOf(m), platform)
			}
		}
		require.Contains(t, digests, img.Name, "part %s, image %s: no manifest for %s", path, img.Name, platform)
	}
	return digests
}

// checkDotenv checks a dotenv report against what GitLab accepts (at most 20 variables,
// KEY=value, one a line, no blank lines, comments or spaces in values) and returns it.
func checkDotenv(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	line := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=[^\s"'#]+$`)
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		require.Regexp(t, line, sc.Text(), "dotenv report line")
		key, value, _ := strings.Cut(sc.Text(), "=")
		require.NotContains(t, vars, key, "dotenv report sets %s twice", key)
		vars[key] = value
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, vars, "empty dotenv report")
	require.LessOrEqual(t, len(vars), dotenvVariablesAtMost, "dotenv report:\n%s", raw)
	return vars
}

// readEnvFile reads the output of `env` (KEY=value lines; continuation lines of multi-line
// values are ignored).
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "the check job's environment")
	env := map[string]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		if key, value, ok := strings.Cut(l, "="); ok {
			env[key] = value
		}
	}
	return env
}

// requireReleased checks, with go-containerregistry, that every tag of every image in md
// resolves to the image's index, whose entries are the five platforms in order. With built
// ("image platform" -> digest), each entry must also be the manifest its build job pushed.
func requireReleased(t *testing.T, md metadataFile, built map[string]v1.Hash) {
	t.Helper()
	for _, img := range md.Images {
		require.NotEmpty(t, img.Tags, "image %s", img.Name)
		for _, tag := range img.tagNames() {
			digest, index := remoteIndex(t, img.Reference+":"+tag)
			assert.Equal(t, img.Digest, digest.String(), "%s:%s", img.Reference, tag)
			var got []string
			for _, m := range index.Manifests {
				if platformOf(m) == attestationPlatform {
					continue
				}
				got = append(got, platformOf(m))
				if built != nil {
					assert.Equal(t, built[img.Name+" "+platformOf(m)], m.Digest, "%s:%s, %s: the build job's manifest", img.Reference, tag, platformOf(m))
				}
			}
			assert.Equal(t, strings.Split(platformList(targets), ","), got, "%s:%s", img.Reference, tag)
		}
	}
}

// remoteIndex reads the image index at ref with go-containerregistry.
func remoteIndex(t *testing.T, ref string) (v1.Hash, *v1.IndexManifest) {
	t.Helper()
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	idx, err := remote.Index(r, remote.WithContext(t.Context()))
	require.NoError(t, err, "read index %s", ref)
	digest, err := idx.Digest()
	require.NoError(t, err)
	manifest, err := idx.IndexManifest()
	require.NoError(t, err)
	return digest, manifest
}

// requireNoTags fails if any image of the example's release under prefix (in r) has a tag.
func requireNoTags(t *testing.T, r *registry, prefix string) {
	t.Helper()
	for _, image := range []string{"gitlab-runner-helper", "gitlab-runner"} {
		repo := strings.TrimPrefix(prefix, r.Host+"/") + "/" + image
		assert.Empty(t, tagsOf(t, r, repo), "tags of %s", repo)
	}
}

// requirePushedByDigest checks that the manifests of the part files in dir exist in the
// registry: the build jobs that succeeded did upload their share.
func requirePushedByDigest(t *testing.T, dir, prefix string, platforms int) {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, parts, platforms, "part files in %s", dir)
	for _, path := range parts {
		platform := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), ciName+"-build-"), ".json")
		platform = strings.ReplaceAll(platform, "-", "/")
		for image, digest := range readCIPart(t, path, platform) {
			ref, err := name.NewDigest(prefix + "/" + image + "@" + digest.String())
			require.NoError(t, err)
			_, err = remote.Head(ref, remote.WithContext(t.Context()))
			require.NoError(t, err, "manifest %s of %s, pushed by digest", ref, platform)
		}
	}
}
