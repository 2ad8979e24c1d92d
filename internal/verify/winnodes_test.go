package verify

import (
	"strings"
	"testing"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// A mixed cluster as kubectl get nodes -o json shows it: a Linux arm64
// node, a Windows Server 2019 node with the kubelet's build label and a
// Windows Server 2022 node known only by its nodeInfo.
const mixedNodes = `{"kind":"List","items":[
 {"metadata":{"name":"lin-arm64","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm64"}}},
 {"metadata":{"name":"win-2019","labels":{"kubernetes.io/os":"windows","kubernetes.io/arch":"amd64","node.kubernetes.io/windows-build":"10.0.17763"}},
  "status":{"nodeInfo":{"operatingSystem":"windows","architecture":"amd64","kernelVersion":"10.0.17763.5830","osImage":"Windows Server 2019 Datacenter"}}},
 {"metadata":{"name":"win-2022","labels":{"kubernetes.io/os":"windows","kubernetes.io/arch":"amd64"}},
  "status":{"nodeInfo":{"operatingSystem":"windows","architecture":"amd64","kernelVersion":"10.0.20348.2340","osImage":"Windows Server 2022 Datacenter"}}}
]}`

func mustPlatforms(t *testing.T, s string) []v1.Platform {
	t.Helper()
	ps, err := platform.ParseList(s)
	require.NoError(t, err)
	return ps
}

func TestParseWindowsNodes(t *testing.T) {
	nodes, err := ParseNodes(strings.NewReader(mixedNodes))
	require.NoError(t, err)
	assert.Equal(t, []Node{
		{Name: "lin-arm64", OS: "linux", Arch: "arm64"},
		{Name: "win-2019", OS: "windows", Arch: "amd64", OSVersion: "10.0.17763"},
		{Name: "win-2022", OS: "windows", Arch: "amd64", OSVersion: "10.0.20348"},
	}, nodes)
	assert.Equal(t, "windows/amd64:10.0.17763", platform.Format(nodes[1].Platform()))

	_, err = ParseNodes(strings.NewReader(`{"kind":"Node","metadata":{"name":"w","labels":{"kubernetes.io/os":"windows","kubernetes.io/arch":"amd64"}},"status":{"nodeInfo":{"osImage":"Windows Server 2022 Datacenter"}}}`))
	assert.ErrorContains(t, err, `node "w": a Windows node (Windows Server 2022 Datacenter) without the node.kubernetes.io/windows-build label`)
	_, err = ParseNodes(strings.NewReader(`{"kind":"Node","metadata":{"name":"w","labels":{"kubernetes.io/os":"windows","kubernetes.io/arch":"amd64","node.kubernetes.io/windows-build":"ltsc2022"}}}`))
	assert.ErrorContains(t, err, `label node.kubernetes.io/windows-build="ltsc2022" is not a Windows build`)
}

func TestWindowsNodesWithoutImage(t *testing.T) {
	nodes, err := ParseNodes(strings.NewReader(mixedNodes))
	require.NoError(t, err)
	full := mustPlatforms(t, "linux/amd64,linux/arm64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340")
	missing, count := checkNodes(nodes, full, "has no image")
	assert.Empty(t, missing)
	assert.Equal(t, "nodes: 3 read (1 linux/arm64, 1 windows/amd64:10.0.17763, 1 windows/amd64:10.0.20348), every one with an image", count.String())

	only2022 := mustPlatforms(t, "linux/arm64,windows/amd64:10.0.20348.2340")
	missing, _ = checkNodes(nodes, only2022, "has no image")
	require.Len(t, missing, 1)
	assert.Equal(t, "win-2019", missing[0].Node)
	assert.Equal(t, "windows/amd64:10.0.17763", missing[0].Platform)

	noVersion := mustPlatforms(t, "linux/arm64,windows/amd64")
	missing, _ = checkNodes(nodes, noVersion, "has no image")
	assert.Len(t, missing, 2, "a Windows entry without os.version serves no Windows node")
}

// runs picks for each node exactly the entries containerd's own matcher
// (what the node's runtime uses) and go-containerregistry's
// remote.WithPlatform matching pick.
func TestWindowsNodesAgreeWithContainerdAndGGCR(t *testing.T) {
	nodes, err := ParseNodes(strings.NewReader(mixedNodes))
	require.NoError(t, err)
	entries := mustPlatforms(t, "linux/amd64,linux/arm64,windows/amd64:10.0.17763.5830,windows/amd64:10.0.20348.2340")
	for _, n := range nodes {
		np := n.Platform()
		m := platforms.NewMatcher(specs.Platform{OS: np.OS, Architecture: np.Architecture, Variant: np.Variant, OSVersion: np.OSVersion})
		var ours, containerd, ggcr []string
		for _, e := range entries {
			if runs(np, e) {
				ours = append(ours, platform.Format(e))
			}
			if m.Match(specs.Platform{OS: e.OS, Architecture: e.Architecture, Variant: e.Variant, OSVersion: e.OSVersion}) {
				containerd = append(containerd, platform.Format(e))
			}
			// ggcr compares os.version exactly: the node asks for the
			// entry's full version when its build matches the node's.
			spec := v1.Platform{OS: np.OS, Architecture: np.Architecture}
			if b, _ := platform.OSBuild(e.OSVersion); np.OS == "windows" && b == np.OSVersion {
				spec.OSVersion = e.OSVersion
			} else if np.OS == "windows" {
				spec.OSVersion = np.OSVersion
			}
			if e.Satisfies(spec) {
				ggcr = append(ggcr, platform.Format(e))
			}
		}
		require.Len(t, ours, 1, n.Name)
		assert.Equal(t, ours, containerd, "containerd for %s", n.Name)
		assert.Equal(t, ours, ggcr, "go-containerregistry for %s", n.Name)
	}
}
