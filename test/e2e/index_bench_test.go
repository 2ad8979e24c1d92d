//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// TestIndexBenchmark measures helperbuild index against skopeo copy --all of an
// equivalent index between two docker-registry instances, five platforms of SIZE MB of
// incompressible layer each (HELPERBUILD_INDEX_BENCH_MB, default 50), and helperbuild's
// peak RSS at SIZE and SIZE/5. It reports; it asserts no time (a loaded machine would make
// that a coin toss). Run it alone: HELPERBUILD_INDEX_BENCH=1 go test -tags e2e -run
// TestIndexBenchmark ./test/e2e/.
func TestIndexBenchmark(t *testing.T) {
	if os.Getenv("HELPERBUILD_INDEX_BENCH") != "1" {
		t.Skip("set HELPERBUILD_INDEX_BENCH=1 to measure")
	}
	s := suiteFor(t)
	mb := int64(50)
	if v := os.Getenv("HELPERBUILD_INDEX_BENCH_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err)
		mb = n
	}
	for _, size := range []int64{mb / 5, mb} {
		dst, err := startRegistry(filepath.Join(t.TempDir(), "target"), fmt.Sprint("bench-", size), false)
		require.NoError(t, err)
		sources, index := benchSources(t, s.plain, fmt.Sprint("bench/src-", size), size<<20)
		argv := append([]string{"/usr/bin/time", "-v", s.helperbuildBin, "index", "--attest", "none", "--tag", dst.ref("bench/hb:v1")}, sources...)
		hb := mustRun(t, command(t, s.helperbuildEnv(t), argv...))
		sk := mustRun(t, command(t, nil, "/usr/bin/time", "-v", "skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false",
			"docker://"+index, "docker://"+dst.ref("bench/skopeo:v1")))
		t.Logf("5 x %d MB: helperbuild index %s (max RSS %d KiB), skopeo copy --all %s (max RSS %d KiB), ratio %.2f",
			size, hb.Duration.Round(time.Millisecond), maxRSS(t, hb.Stderr), sk.Duration.Round(time.Millisecond), maxRSS(t, sk.Stderr),
			hb.Duration.Seconds()/sk.Duration.Seconds())
		require.NoError(t, dst.stop())
	}
}

// benchSources pushes five per-arch images with a random layer of size bytes each to r
// as REPO:<arch>, and the index of them as REPO:index.
func benchSources(t *testing.T, r *registry, repo string, size int64) ([]string, string) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var refs []string
	for _, tg := range targets {
		p := v1.Platform{OS: tg.OS, Architecture: tg.Arch, Variant: tg.Variant}
		l, err := random.Layer(size, types.DockerLayer)
		require.NoError(t, err)
		img, err := mutate.AppendLayers(testkit.ArchImage(t, os.Environ(), p, tg.Arch), l)
		require.NoError(t, err)
		ref, err := name.ParseReference(r.ref(repo+":"+tg.GitLabArch), name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(ref, img))
		refs = append(refs, ref.String())
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ref, err := name.ParseReference(r.ref(repo+":index"), name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(ref, idx))
	return refs, ref.String()
}

var maxRSSLine = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)

func maxRSS(t *testing.T, stderr string) int {
	t.Helper()
	m := maxRSSLine.FindStringSubmatch(stderr)
	require.NotNil(t, m, "no /usr/bin/time -v output in:\n%s", stderr)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}
