package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/release"
)

const fanOutRecipe = `platforms: [linux/amd64, linux/arm64, linux/arm/v7, linux/ppc64le, linux/s390x]
build:
  ldflags: -X main.version={{.Version}}
binaries:
  - main: ./cmd/hello
    output: hello-{{.OS}}-{{.Arch}}{{.Variant}}
images:
  - name: hello
    dockerfile: Dockerfile
    contexts: {bins: "binaries:"}
    tags: ["{{.Version}}"]
    platform_tags: ["{{.GitLabArch}}-{{.Version}}"]
  - name: hello-runner
    dockerfile: Dockerfile
    contexts: {bins: "binaries:"}
    tags: ["{{.Version}}", latest]
`

const fanOutDockerfile = `FROM scratch
ARG TARGETOS
ARG TARGETARCH
ARG TARGETVARIANT
COPY --from=bins --chmod=755 hello-${TARGETOS}-${TARGETARCH}${TARGETVARIANT} /usr/bin/hello
ENTRYPOINT ["/usr/bin/hello"]
`

var fanOutPlatforms = []string{"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"}

// TestMergeFanOut is the central test of a fanned-out release: a single
// push of five platforms and five push --by-digest jobs (one platform
// each, a cache of their own) then merge give the same index digests and
// the same tags. Before that, every way merge refuses parts is tried: one
// line naming the parts, exit 1, and no tag in the registry.
func TestMergeFanOut(t *testing.T) {
	log := &testkit.RequestLog{}
	host := testkit.Registry(t, log.Wrap)
	dir := helloModule(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(fanOutDockerfile), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helperbuild.yaml"), []byte(fanOutRecipe), 0o644))
	env := baseEnv("CI_COMMIT_TAG=v2.0.0", "CI_COMMIT_SHA=0123abc0000000000000000000000000000000ab")

	dotenvs := t.TempDir()
	singleMeta := filepath.Join(dotenvs, "single.json")
	code, single, stderr := run(t, env, "push", "--repo", host+"/single", "--dotenv", filepath.Join(dotenvs, "single.env"), "--metadata-file", singleMeta)
	require.Equal(t, 0, code, stderr)

	parts := t.TempDir()
	for i, p := range fanOutPlatforms {
		jobEnv := append(slices.Clone(env), fmt.Sprintf("CI_JOB_ID=%d", 100+i), "CI_JOB_NAME=build: ["+p+"]")
		code, stdout, stderr := run(t, jobEnv, "push", "--by-digest", "--part-file", filepath.Join(parts, fmt.Sprint(100+i)+".json"),
			"--platforms", p, "--repo", host+"/fan", "--cache-dir", filepath.Join(t.TempDir(), "cache"))
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, host+"/fan/hello (by digest, no tag; part file ")
		assert.Contains(t, stdout, "TAGS (merge writes them)", "the platform tags the job lists are not written yet")
		assert.NotContains(t, stderr, "msg=tagged")
		// It wrote platform manifests, no index (issue 25: "publish done: 2 indexes").
		assert.Regexp(t, `(?m)^publish done.*: 0 indexes, 2 manifests`, stderr)
	}
	repos := []string{host + "/fan/hello", host + "/fan/hello-runner"}
	for _, r := range repos {
		assert.Empty(t, listTags(t, r), "push --by-digest writes no tag")
	}

	t.Run("refusals", func(t *testing.T) {
		testMergeRefusals(t, host, parts, repos)
	})

	log.Take()
	meta := filepath.Join(t.TempDir(), "meta.json")
	code, merged, stderr := run(t, env, "merge", "--metadata-file", meta, "--dotenv", filepath.Join(dotenvs, "merged.env"), parts)
	require.Equal(t, 0, code, stderr)
	requests := log.Take()

	// Same index digests, same tags pointing at the same manifests.
	for _, n := range []string{"hello", "hello-runner"} {
		want, got := host+"/single/"+n, host+"/fan/"+n
		wantTags, gotTags := listTags(t, want), listTags(t, got)
		slices.Sort(wantTags)
		slices.Sort(gotTags)
		assert.Equal(t, wantTags, gotTags, n)
		for _, tag := range wantTags {
			w, err := remote.Head(testkit.Ref(t, want+":"+tag))
			require.NoError(t, err)
			g, err := remote.Head(testkit.Ref(t, got+":"+tag))
			require.NoError(t, err)
			assert.Equal(t, w.Digest, g.Digest, "%s:%s", n, tag)
		}
	}
	assert.Equal(t, []string{"arm-v2.0.0", "arm64-v2.0.0", "ppc64le-v2.0.0", "s390x-v2.0.0", "v2.0.0", "x86_64-v2.0.0"}, sorted(listTags(t, host+"/fan/hello")))
	assert.Equal(t, strings.ReplaceAll(single, "/single/", "/fan/"), merged, "merge reports as push does")
	singleEnv, err := os.ReadFile(filepath.Join(dotenvs, "single.env"))
	require.NoError(t, err)
	mergedEnv, err := os.ReadFile(filepath.Join(dotenvs, "merged.env"))
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(string(singleEnv), "/single/", "/fan/"), string(mergedEnv), "merge writes push's --dotenv")

	var m release.Metadata
	data, err := os.ReadFile(meta)
	require.NoError(t, err)
	singleData, err := os.ReadFile(singleMeta)
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(string(singleData), "/single/", "/fan/"), string(data), "merge's --metadata-file is the single push's")
	require.NoError(t, json.Unmarshal(data, &m))
	require.Len(t, m.Images, 2)
	assert.Equal(t, host+"/fan/hello", m.Images[0].Reference)
	assert.Len(t, m.Images[0].Platforms, 5)

	// Merge read manifests and configs, never a platform image's layer (it
	// reads the attestation manifests' statements, bounded: they say which
	// image each is about).
	layers := map[string]bool{}
	for _, n := range []string{"hello", "hello-runner"} {
		idx, err := remote.Index(testkit.Ref(t, host+"/fan/"+n+":v2.0.0"))
		require.NoError(t, err)
		im, err := idx.IndexManifest()
		require.NoError(t, err)
		for _, d := range im.Manifests {
			if attestspec.IsAttestation(d) {
				continue
			}
			img, err := idx.Image(d.Digest)
			require.NoError(t, err)
			mf, err := img.Manifest()
			require.NoError(t, err)
			for _, l := range mf.Layers {
				layers[l.Digest.String()] = true
			}
		}
	}
	require.NotEmpty(t, layers)
	for _, r := range requests {
		method, path, _ := strings.Cut(r, " ")
		if i := strings.Index(path, "/blobs/sha256:"); i >= 0 && method == "GET" {
			assert.False(t, layers[path[i+len("/blobs/"):]], "merge downloaded a layer: %s", r)
		}
	}
}

// testMergeRefusals runs merge on edited copies of the parts in dir: each
// is refused with one line naming what is wrong, exit 1, and no tag
// appears in repos.
func testMergeRefusals(t *testing.T, host, dir string, repos []string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 5)
	read := func(t *testing.T) []*part.File {
		var out []*part.File
		for _, f := range files {
			p, err := part.Read(f)
			require.NoError(t, err)
			out = append(out, p)
		}
		return out
	}
	other := filepath.Join(t.TempDir(), "other.yaml")
	require.NoError(t, os.WriteFile(other, []byte(fanOutRecipe+"# another\n"), 0o644))
	for _, tc := range []struct {
		name string
		edit func(ps []*part.File) []*part.File
		code int // 1 unless set
		args []string
		want string
	}{
		{name: "a platform missing", edit: func(ps []*part.File) []*part.File { return ps[:4] },
			want: "image hello: linux/s390x is missing: none of the 4 parts has it"},
		{name: "a platform twice", edit: func(ps []*part.File) []*part.File { return append(ps, ps[1]) },
			want: `image hello: linux/arm64 is in two parts: P101.json (job 101 "build: [linux/arm64]") and P101b.json (job 101 "build: [linux/arm64]")`},
		{name: "a platform not in the recipe", edit: func(ps []*part.File) []*part.File {
			ps[4].Images[0].Manifests[0].Platform = &v1.Platform{OS: "linux", Architecture: "riscv64"}
			return ps
		}, want: `image hello: linux/riscv64 from P104.json (job 104 "build: [linux/s390x]") is not one of its release platforms (the recipe's platforms: linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x)`},
		{name: "--platforms other than the parts' release", args: []string{"--platforms", "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le"},
			want: `--platforms linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le is not the release the parts were built for (linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x, in P100.json (job 100 "build: [linux/amd64]")); to release only linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le, build the parts with push --by-digest --release-platforms linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le and merge them without --platforms; to release the parts' list, leave --platforms out`},
		{name: "--platforms in another order", args: []string{"--platforms", "linux/arm64,linux/amd64,linux/arm/v7,linux/ppc64le,linux/s390x"},
			want: `--platforms linux/arm64,linux/amd64,linux/arm/v7,linux/ppc64le,linux/s390x is not the release the parts were built for`},
		{name: "a platform not in the parts' release", edit: func(ps []*part.File) []*part.File {
			for _, f := range ps {
				f.Platforms = f.Platforms[:4]
			}
			return ps
		}, want: `image hello: linux/s390x from P104.json (job 104 "build: [linux/s390x]") is not one of its release platforms`},
		{name: "another revision", edit: func(ps []*part.File) []*part.File { ps[2].Revision = "fedcba9"; return ps },
			want: `parts were built from different revisions: 0123abc0000000000000000000000000000000ab in P100.json (job 100 "build: [linux/amd64]"), P101.json (job 101 "build: [linux/arm64]"), P103.json (job 103 "build: [linux/ppc64le]"), P104.json (job 104 "build: [linux/s390x]"); fedcba9 in P102.json (job 102 "build: [linux/arm/v7]")`},
		{name: "another helperbuild", edit: func(ps []*part.File) []*part.File { ps[4].Helperbuild = "v0.0.1"; return ps },
			want: `parts were built from different helperbuild versions: `},
		{name: "another version", edit: func(ps []*part.File) []*part.File { ps[0].Version = "v2.0.1"; return ps },
			want: `parts were built from different versions: v2.0.1 in P100.json`},
		{name: "another epoch", edit: func(ps []*part.File) []*part.File { ps[3].Created = ps[3].Created.Add(time.Second); return ps },
			want: `parts were built from different epochs: 2023-11-14T22:13:20Z in P100.json`},
		{name: "another recipe", edit: func(ps []*part.File) []*part.File { ps[1].Recipe.Digest.Hex = strings.Repeat("0", 64); return ps },
			want: `parts were built from different recipes: `},
		{name: "not the recipe of --config", args: []string{"--config", other},
			want: "the parts were built from a different recipe than --config " + other},
		{name: "a manifest not in the registry", edit: func(ps []*part.File) []*part.File {
			ps[3].Images[1].Manifests[0].Digest.Hex = strings.Repeat("f", 64)
			if a := attestationOf(ps[3].Images[1]); a != nil { // still about the platform image
				a.Annotations[attestspec.AnnotationReferenceDigest] = ps[3].Images[1].Manifests[0].Digest.String()
			}
			return ps
		}, code: exitNotFound, want: `image hello-runner: manifest sha256:` + strings.Repeat("f", 64) + ` of linux/ppc64le from P103.json (job 103 "build: [linux/ppc64le]"): not in ` + host + `/fan/hello-runner: GET http://` + host + `/v2/fan/hello-runner/manifests/sha256:` + strings.Repeat("f", 64) + `: MANIFEST_UNKNOWN: Unknown manifest (push --by-digest of that job did not finish, or pushed elsewhere)`},
		{name: "a config of another platform", edit: func(ps []*part.File) []*part.File {
			a, b := ps[0].Images[0].Manifests[0].Platform, ps[1].Images[0].Manifests[0].Platform
			ps[0].Images[0].Manifests[0].Platform, ps[1].Images[0].Manifests[0].Platform = b, a
			return ps
		}, want: ` of linux/amd64 from P101.json (job 101 "build: [linux/arm64]"): config says linux/arm64 but the index lists it as linux/amd64`},
		{name: "an attestation about no platform image", edit: func(ps []*part.File) []*part.File {
			attestationOf(ps[0].Images[0]).Annotations[attestspec.AnnotationReferenceDigest] = "sha256:" + strings.Repeat("0", 64)
			return ps
		}, want: ` from P100.json (job 100 "build: [linux/amd64]") is about "sha256:` + strings.Repeat("0", 64) + `" (its vnd.docker.reference.digest), none of the image's platform images; merge the part files as their jobs wrote them`},
		{name: "an attestation whose subject is another image", edit: func(ps []*part.File) []*part.File {
			attestationOf(ps[0].Images[0]).Annotations[attestspec.AnnotationReferenceDigest] = ps[1].Images[0].Manifests[0].Digest.String()
			return ps
		}, want: ` from P100.json (job 100 "build: [linux/amd64]"): statement sha256:`},
		{name: "not a part file", edit: func(ps []*part.File) []*part.File { ps[0].Images = nil; return ps },
			want: `P100.json: no images`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := read(t)
			if tc.edit != nil {
				ps = tc.edit(ps)
			}
			out := t.TempDir()
			for _, p := range ps {
				path := filepath.Join(out, filepath.Base(p.Path))
				if _, err := os.Stat(path); err == nil {
					path = strings.TrimSuffix(path, ".json") + "b.json"
				}
				data, err := part.Marshal(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, data, 0o644))
			}
			args := append(append([]string{"merge"}, tc.args...), out)
			code, stdout, stderr := run(t, baseEnv(), args...)
			assert.Equal(t, max(tc.code, 1), code, stderr)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Contains(t, stderr, strings.ReplaceAll(tc.want, "P1", filepath.Join(out, "1")))
			for _, r := range repos {
				assert.Empty(t, listTags(t, r), "nothing tagged in %s", r)
			}
		})
	}
}

// attestationOf is the entry of pi's attestation manifest; nil (and the
// edit panics) when the part has none.
func attestationOf(pi part.Image) *v1.Descriptor {
	for i, d := range pi.Manifests {
		if attestspec.IsAttestation(d) {
			return &pi.Manifests[i]
		}
	}
	return nil
}

// listTags lists repo's tags; none when it has only untagged manifests.
func listTags(t *testing.T, repo string) []string {
	t.Helper()
	r, err := mustRepo(t, repo)
	require.NoError(t, err)
	tags, err := remote.List(r)
	require.NoError(t, err)
	return tags
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func mustRepo(t *testing.T, s string) (name.Repository, error) {
	t.Helper()
	return name.NewRepository(s)
}
