package dockerfile

import (
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

func parseFile(t *testing.T, name, file string) *File {
	t.Helper()
	r, err := os.Open(filepath.Join("testdata", file))
	require.NoError(t, err)
	defer r.Close()
	f, err := Parse(name, r)
	require.NoError(t, err)
	return f
}

// helperBase is the config of a prepared helper base image.
func helperBase() v1.Config {
	return v1.Config{
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"},
		Cmd:        []string{"sh"},
	}
}

// TestGitLabRunnerHelper runs GitLab Runner's own helper Dockerfile for
// each platform the way bake would.
func TestGitLabRunnerHelper(t *testing.T) {
	const name = "dockerfiles/runner-helper/Dockerfile"
	f := parseFile(t, name, "runner-helper.Dockerfile")
	assert.Equal(t, []string{"binary_dir"}, f.NamedContexts())
	assert.False(t, f.UsesMainContext())
	assert.Equal(t, []string{"BASE_IMAGE", "TARGETOS", "TARGETARCH"}, f.ArgNames())

	bin := makeTree(t,
		node{path: "gitlab-runner-helper.linux-amd64", data: "amd64", mode: 0o700},
		node{path: "gitlab-runner-helper.linux-arm64", data: "arm64", mode: 0o700},
		node{path: "gitlab-runner-helper.linux-arm", data: "arm", mode: 0o700},
	)
	args := map[string]string{"BASE_IMAGE": "registry.example.com/base/runner-helper:alpine"}
	for _, tc := range []struct {
		platform v1.Platform
		arch     string
	}{{amd64, "amd64"}, {arm64, "arm64"}, {armv7, "arm"}} {
		t.Run(tc.arch, func(t *testing.T) {
			st, err := f.Resolve(Target{Platform: tc.platform, BuildPlatform: amd64, Args: args})
			require.NoError(t, err)
			assert.Equal(t, "registry.example.com/base/runner-helper:alpine", st.Base)
			res, err := st.Apply(helperBase(), Contexts{Named: map[string]string{"binary_dir": bin}})
			require.NoError(t, err)
			assert.Equal(t, helperBase(), res.Config, "the base's config is kept")
			assert.Equal(t, []string{
				"ARG TARGETOS=linux",
				"ARG TARGETARCH=" + tc.arch,
				"[layer] COPY --chmod=755 gitlab-runner-helper.linux-" + tc.arch + " /usr/bin/gitlab-runner-helper # buildkit",
			}, history(t, res.Steps))
			assert.Equal(t, []rootfs.Entry{{
				Path: "/usr/bin/gitlab-runner-helper", Kind: rootfs.File,
				Source: filepath.Join(bin, "gitlab-runner-helper.linux-"+tc.arch), Mode: 0o755,
			}}, res.Steps[2].Entries)
		})
	}

	t.Run("on scratch", func(t *testing.T) {
		st, err := f.Resolve(Target{Platform: arm64, Args: map[string]string{"BASE_IMAGE": "scratch"}})
		require.NoError(t, err)
		assert.Equal(t, "scratch", st.Base)
		res, err := st.Apply(v1.Config{}, Contexts{Named: map[string]string{"binary_dir": bin}})
		require.NoError(t, err)
		assert.Equal(t, v1.Config{Env: []string{alpinePath}, WorkingDir: "/"}, res.Config)
		assert.Len(t, res.Steps, 3)
	})

	t.Run("without BASE_IMAGE", func(t *testing.T) {
		_, err := f.Resolve(Target{Platform: amd64})
		require.EqualError(t, err, name+":2: FROM $BASE_IMAGE: build arg BASE_IMAGE has no value; "+
			"set it under args: in helperbuild.yaml (args: {BASE_IMAGE: ...}) or give it a default (ARG BASE_IMAGE=...)")
	})

	t.Run("without the binary", func(t *testing.T) {
		st, err := f.Resolve(Target{Platform: v1.Platform{OS: "linux", Architecture: "s390x"}, Args: args})
		require.NoError(t, err)
		_, err = st.Apply(helperBase(), Contexts{Named: map[string]string{"binary_dir": bin}})
		require.EqualError(t, err, name+`:5: COPY gitlab-runner-helper.linux-s390x: "gitlab-runner-helper.linux-s390x" not found in context "binary_dir" (`+bin+`)`)
	})

	t.Run("without the context", func(t *testing.T) {
		st, err := f.Resolve(Target{Platform: amd64, Args: args})
		require.NoError(t, err)
		_, err = st.Apply(helperBase(), Contexts{Named: map[string]string{"binaries": bin}})
		require.EqualError(t, err, name+`:5: COPY --from=binary_dir: no context named "binary_dir" (available: binaries); add it under contexts: in helperbuild.yaml`)
	})
}

// TestGitLabRunner runs the runner Dockerfile: two named contexts and a
// destination directory that the copy creates.
func TestGitLabRunner(t *testing.T) {
	f := parseFile(t, "dockerfiles/runner/Dockerfile", "runner.Dockerfile")
	assert.Equal(t, []string{"binary_dir", "packaging_dir"}, f.NamedContexts())
	bin := makeTree(t, node{path: "gitlab-runner-linux-s390x", data: "s390x", mode: 0o755})
	pkg := makeTree(t, node{path: "clear-docker-cache", data: "#!/bin/sh\n", mode: 0o644})
	st, err := f.Resolve(Target{Platform: v1.Platform{OS: "linux", Architecture: "s390x"}, BuildPlatform: amd64,
		Args: map[string]string{"BASE_IMAGE": "registry.example.com/base/runner:ubuntu"}})
	require.NoError(t, err)
	res, err := st.Apply(helperBase(), Contexts{Named: map[string]string{"binary_dir": bin, "packaging_dir": pkg}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"ARG TARGETOS=linux",
		"ARG TARGETARCH=s390x",
		"[layer] COPY --chmod=755 gitlab-runner-linux-s390x /usr/bin/gitlab-runner # buildkit",
		"[layer] COPY --chmod=755 clear-docker-cache /usr/share/gitlab-runner/ # buildkit",
	}, history(t, res.Steps))
	assert.Equal(t, []rootfs.Entry{
		{Path: "/usr/share/gitlab-runner", Kind: rootfs.Dir, Mode: 0o755},
		{Path: "/usr/share/gitlab-runner/clear-docker-cache", Kind: rootfs.File, Source: filepath.Join(pkg, "clear-docker-cache"), Mode: 0o755},
	}, res.Steps[3].Entries)
}

// TestConcurrentApply: one File and its Stages serve several platforms at
// once (run with -race).
func TestConcurrentApply(t *testing.T) {
	f := parseFile(t, "dockerfiles/runner-helper/Dockerfile", "runner-helper.Dockerfile")
	bin := makeTree(t,
		node{path: "gitlab-runner-helper.linux-amd64", data: "amd64"},
		node{path: "gitlab-runner-helper.linux-arm64", data: "arm64"},
		node{path: "gitlab-runner-helper.linux-arm", data: "arm"},
	)
	platforms := []v1.Platform{amd64, arm64, armv7, amd64, arm64, armv7}
	out := make([]string, len(platforms))
	errs := make([]error, len(platforms))
	done := make(chan struct{})
	for i, p := range platforms {
		go func() {
			defer func() { done <- struct{}{} }()
			st, err := f.Resolve(Target{Platform: p, Args: map[string]string{"BASE_IMAGE": "base"}})
			if err != nil {
				errs[i] = err
				return
			}
			res, err := st.Apply(helperBase(), Contexts{Named: map[string]string{"binary_dir": bin}})
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = res.Steps[2].Entries[0].Source
		}()
	}
	for range platforms {
		<-done
	}
	for i, p := range platforms {
		require.NoError(t, errs[i])
		assert.Equal(t, filepath.Join(bin, "gitlab-runner-helper.linux-"+p.Architecture), out[i])
	}
}
