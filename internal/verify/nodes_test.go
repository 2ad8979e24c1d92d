package verify

import (
	"context"
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

func TestParseNodesFixture(t *testing.T) {
	f, err := os.Open("testdata/nodes.json")
	require.NoError(t, err)
	defer f.Close()
	nodes, err := ParseNodes(f)
	require.NoError(t, err)
	assert.Equal(t, []Node{
		{Name: "worker-amd64-1", OS: "linux", Arch: "amd64"},
		{Name: "worker-arm64-1", OS: "linux", Arch: "arm64"},
		{Name: "rpi-1", OS: "linux", Arch: "arm"},
		{Name: "visionfive2-1", OS: "linux", Arch: "riscv64"}, // from status.nodeInfo
	}, nodes)
	assert.Equal(t, "linux/arm/v7", platform.Format(nodes[2].Platform()))
}

func TestParseNodes(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Node
		wantErr  string
	}{
		{
			name: "single node with variant label",
			in:   `{"kind":"Node","metadata":{"name":"pi-zero","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm","helperbuild.io/arch-variant":"v6"}}}`,
			want: []Node{{Name: "pi-zero", OS: "linux", Arch: "arm", Variant: "v6"}},
		},
		{
			name: "beta labels",
			in:   `{"kind":"NodeList","items":[{"metadata":{"name":"old","labels":{"beta.kubernetes.io/os":"linux","beta.kubernetes.io/arch":"s390x"}}}]}`,
			want: []Node{{Name: "old", OS: "linux", Arch: "s390x"}},
		},
		{name: "empty list", in: `{"kind":"List","items":[]}`, wantErr: "no nodes in it, so nothing to check"}, // issue 25: it passed silently
		{name: "not a list", in: `{"kind":"Pod"}`, wantErr: `kind "Pod" has no items`},
		{name: "not JSON", in: `nodes:`, wantErr: "node list:"},
		{name: "no name", in: `{"items":[{"metadata":{"labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm64"}}}]}`, wantErr: "item 0: no metadata.name"},
		{name: "no arch", in: `{"items":[{"metadata":{"name":"n1"}}]}`, wantErr: `node "n1": no kubernetes.io/os`},
		{name: "slash in arch", in: `{"items":[{"metadata":{"name":"n1","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm/v7"}}}]}`, wantErr: "malformed platform"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodes(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNodesWithoutImage(t *testing.T) {
	tests := []struct {
		name   string
		node   Node
		listed []v1.Platform
		served bool
	}{
		{"arm/v7 node, arm/v7 image", Node{"n", "linux", "arm", "", ""}, []v1.Platform{armv7}, true},
		{"arm/v7 node, arm/v6 image", Node{"n", "linux", "arm", "v7", ""}, []v1.Platform{plat("linux", "arm", "v6")}, true},
		{"arm/v7 node, arm image without variant", Node{"n", "linux", "arm", "v7", ""}, []v1.Platform{plat("linux", "arm", "")}, true},
		{"arm/v6 node, arm/v7 image", Node{"n", "linux", "arm", "v6", ""}, []v1.Platform{armv7}, false},
		{"arm64 node, arm/v7 image only", Node{"n", "linux", "arm64", "", ""}, []v1.Platform{armv7}, false},
		{"arm64 node with v8 label", Node{"n", "linux", "arm64", "v8", ""}, []v1.Platform{arm64}, true},
		{"amd64 node, 386 image only", Node{"n", "linux", "amd64", "", ""}, []v1.Platform{plat("linux", "386", "")}, false},
		{"amd64 node, amd64/v3 image only", Node{"n", "linux", "amd64", "", ""}, []v1.Platform{plat("linux", "amd64", "v3")}, false},
		{"amd64/v3 node, amd64 image", Node{"n", "linux", "amd64", "v3", ""}, []v1.Platform{amd64}, true},
		{"windows node, linux image", Node{"n", "windows", "amd64", "", ""}, []v1.Platform{amd64}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodesWithoutImage([]Node{tt.node}, tt.listed, "has no image in this index")
			assert.Equal(t, tt.served, len(got) == 0, got)
		})
	}
}

func TestIndexNodes(t *testing.T) {
	f, err := os.Open("testdata/nodes.json")
	require.NoError(t, err)
	defer f.Close()
	nodes, err := ParseNodes(f)
	require.NoError(t, err)
	idx := testIndex(t,
		listed{amd64, testImage(t, amd64, v1.Config{})},
		listed{arm64, testImage(t, arm64, v1.Config{})},
		listed{armv7, testImage(t, armv7, v1.Config{})},
	)
	r, err := Index(context.Background(), idx, Options{Nodes: nodes})
	require.NoError(t, err)
	assert.Equal(t, []Finding{{Platform: "linux/riscv64", Check: CheckNodes, Node: "visionfive2-1", Reason: "has no image in this index", Severity: SeverityFail}}, r.Problems)
	assert.False(t, r.OK())

	// A single image: every other node is named.
	r, err = Image(context.Background(), testImage(t, arm64, v1.Config{}), Options{Nodes: nodes, Platforms: []v1.Platform{arm64}})
	require.NoError(t, err)
	var lines []string
	for _, p := range r.Problems {
		lines = append(lines, "node "+p.Node+" ("+p.Platform+") "+p.Reason)
	}
	assert.Equal(t, []string{
		"node rpi-1 (linux/arm/v7) cannot run this linux/arm64 image",
		"node visionfive2-1 (linux/riscv64) cannot run this linux/arm64 image",
		"node worker-amd64-1 (linux/amd64) cannot run this linux/arm64 image",
	}, lines)
}

func FuzzParseNodes(f *testing.F) {
	b, err := os.ReadFile("testdata/nodes.json")
	require.NoError(f, err)
	f.Add(string(b))
	f.Add(`{"kind":"Node","metadata":{"name":"a","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm"}}}`)
	f.Add(`{"items":null}`)
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := ParseNodes(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.Name == "" || n.OS == "" || n.Arch == "" {
				t.Fatalf("incomplete node %+v accepted", n)
			}
			_ = nodesWithoutImage([]Node{n}, []v1.Platform{amd64, armv7}, "x")
		}
	})
}
