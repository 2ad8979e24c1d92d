//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/test/faultproxy"
)

// TestIndexThroughFaults copies between two plain docker-registry instances with the
// fault proxy in front of either: transient faults on both sides give the fault-free
// digest; an index run interrupted (SIGINT) while its manifests stall moves no tag,
// and the next run completes.
func TestIndexThroughFaults(t *testing.T) {
	s := suiteFor(t)
	src := s.plain
	dst, err := startRegistry(filepath.Join(t.TempDir(), "target"), "index-faults", false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dst.stop() })
	env := s.helperbuildEnv(t)
	const repo = "e2e-gitlab/faults-helper"
	var sources []string
	s.mustStep(t, "per-arch sources", func(t *testing.T) {
		for _, tg := range targets {
			ref, err := name.ParseReference(src.ref(repo+":"+tg.GitLabArch+"-v17.10.0"), name.Insecure)
			require.NoError(t, err)
			img := testkit.ArchImage(t, os.Environ(), v1.Platform{OS: tg.OS, Architecture: tg.Arch, Variant: tg.Variant}, tg.Arch)
			require.NoError(t, remote.Write(ref, img))
			sources = append(sources, ref.String())
		}
	})
	via := func(p *faultproxy.Proxy, ref string) string { return p.Addr() + strings.TrimPrefix(ref, src.Host) }
	indexRun := func(t *testing.T, srcProxy *faultproxy.Proxy, dstHost, tag string, extra ...string) result {
		// No provenance: it names the sources as written, and the proxies' addresses
		// differ from the registry's.
		args := append([]string{"index", "--attest", "none", "--tag", dstHost + "/mirror/helper:" + tag}, extra...)
		for _, sr := range sources {
			if srcProxy != nil {
				sr = via(srcProxy, sr)
			}
			args = append(args, sr)
		}
		return s.helperbuild(t, t.TempDir(), env, args...)
	}
	var want string
	s.mustStep(t, "fault-free", func(t *testing.T) {
		res := indexRun(t, nil, dst.Host, "clean")
		require.Zero(t, res.ExitCode, "%s", res)
		want = pinnedDigest(t, res.Stdout, dst.Host+"/mirror/helper")
	})
	for _, seed := range []int64{1, 2} {
		s.step(t, fmt.Sprintf("transient faults on both sides, seed %d", seed), func(t *testing.T) {
			opts := faultproxy.Options{Seed: seed, Rate: 0.3,
				Faults: []faultproxy.Fault{faultproxy.Status5xx, faultproxy.TooMany, faultproxy.ResetMidBody, faultproxy.Truncate, faultproxy.Slow}}
			opts.Target = src.baseURL()
			ps, err := faultproxy.Start(opts)
			require.NoError(t, err)
			defer ps.Close()
			opts.Target = dst.baseURL()
			pd, err := faultproxy.Start(opts)
			require.NoError(t, err)
			defer pd.Close()
			res := indexRun(t, ps, pd.Addr(), fmt.Sprint("seed-", seed), "--retries", "6", "--timeout", "5s")
			require.Zero(t, res.ExitCode, "%s", res)
			assert.Equal(t, want, pinnedDigest(t, res.Stdout, pd.Addr()+"/mirror/helper"), "the fault-free digest")
			assert.NotEmpty(t, ps.Stats().Injected, "faults on the source side")
			assert.NotEmpty(t, pd.Stats().Injected, "faults on the target side")
		})
	}
	stalls := []struct {
		name, repo string
		match      func(*http.Request) bool
	}{
		{"SIGINT in the middle of the blob copy", "mirror/interrupted-blobs", func(r *http.Request) bool {
			return (r.Method == http.MethodPatch || r.Method == http.MethodPut) && strings.Contains(r.URL.Path, "/blobs/uploads/")
		}},
		{"SIGINT while the manifests stall", "mirror/interrupted-manifests", func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
		}},
	}
	for _, st := range stalls {
		s.step(t, st.name+": no tag; the next run completes", func(t *testing.T) {
			indexInterrupted(t, s, env, dst, st.repo, st.match, sources)
			res := s.helperbuild(t, t.TempDir(), env, append([]string{"index", "--attest", "none", "--tag", dst.ref(st.repo + ":v1")}, sources...)...)
			require.Zero(t, res.ExitCode, "%s", res)
			assert.Equal(t, want, pinnedDigest(t, res.Stdout, dst.Host+"/"+st.repo))
			assert.Equal(t, []string{"v1"}, listTags(t, dst, st.repo))
		})
	}
}

// indexInterrupted runs index to dst's repo through a proxy that holds every request
// match selects, sends SIGINT once it holds one, and checks that the run said so and
// tagged nothing.
func indexInterrupted(t *testing.T, s *Suite, env []string, dst *registry, repo string, match func(*http.Request) bool, sources []string) {
	pd, err := faultproxy.Start(faultproxy.Options{Target: dst.baseURL(), Persistent: true, Faults: []faultproxy.Fault{faultproxy.Slow}, Match: match})
	require.NoError(t, err)
	defer pd.Close()
	args := append([]string{s.helperbuildBin, "index", "--attest", "none", "--tag", pd.Addr() + "/" + repo + ":v1"}, sources...)
	cmd := command(t, env, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// The event: the proxy holds a request.
	for i := 0; len(pd.Stats().Injected) == 0; i++ {
		require.Less(t, i, 3000, "no request reached the proxy:\n%s", stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	assert.Equal(t, 130, cmd.ProcessState.ExitCode(), "%v\n%s", err, stderr.String())
	assert.Contains(t, stderr.String(), "interrupted: nothing was tagged")
	assert.Empty(t, listTags(t, dst, repo))
}
