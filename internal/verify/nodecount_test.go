package verify

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNodeCount: the report says how many nodes were read, of which
// platforms, and how many run an image (issue 25: nodes passed silently).
func TestNodeCount(t *testing.T) {
	nodes, err := ParseNodes(strings.NewReader(`{"items":[
		{"metadata":{"name":"a1","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}}},
		{"metadata":{"name":"b1","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm64"}}},
		{"metadata":{"name":"a2","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}}},
		{"metadata":{"name":"b2","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"arm64"}}},
		{"metadata":{"name":"a3","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}}}]}`))
	require.NoError(t, err)
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}

	missing, c := checkNodes(nodes, []v1.Platform{amd64, arm64}, "has no image in this index")
	assert.Empty(t, missing)
	assert.Equal(t, &NodeCount{Read: 5, WithImage: 5, Platforms: []PlatformNodes{{"linux/amd64", 3}, {"linux/arm64", 2}}}, c)
	assert.Equal(t, "nodes: 5 read (3 linux/amd64, 2 linux/arm64), every one with an image", c.String())

	missing, c = checkNodes(nodes, []v1.Platform{amd64}, "cannot run this linux/amd64 image")
	assert.Len(t, missing, 2)
	assert.Equal(t, "nodes: 5 read (3 linux/amd64, 2 linux/arm64), 3 with an image, 2 without", c.String())

	missing, c = checkNodes(nil, []v1.Platform{amd64}, "x")
	assert.Nil(t, missing)
	assert.Nil(t, c, "no --nodes: no count")
}
