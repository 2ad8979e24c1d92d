package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// NodeCount says what the nodes check (Options.Nodes) covered, so a report
// never passes nodes silently: how many were read, how many of each
// platform, and how many of them run an image of the reference.
type NodeCount struct {
	Read      int             `json:"read"`
	Platforms []PlatformNodes `json:"platforms"` // by platform name, never null
	WithImage int             `json:"withImage"`
}

// PlatformNodes is how many nodes of one platform were checked.
type PlatformNodes struct {
	Platform string `json:"platform"`
	Nodes    int    `json:"nodes"`
}

// checkNodes is nodesWithoutImage's problems and the count of nodes; a nil
// count without nodes (no --nodes).
func checkNodes(nodes []Node, listed []v1.Platform, what string) ([]Finding, *NodeCount) {
	if len(nodes) == 0 {
		return nil, nil
	}
	missing := nodesWithoutImage(nodes, listed, what)
	c := &NodeCount{Read: len(nodes), WithImage: len(nodes) - len(missing), Platforms: []PlatformNodes{}}
	count := map[string]int{}
	for _, n := range nodes {
		count[platform.Format(n.Platform())]++
	}
	for _, p := range slices.Sorted(maps.Keys(count)) {
		c.Platforms = append(c.Platforms, PlatformNodes{Platform: p, Nodes: count[p]})
	}
	return missing, c
}

// String is the report's nodes line: "nodes: 5 read (3 linux/amd64, 2
// linux/arm64), 4 with an image, 1 without".
func (c *NodeCount) String() string {
	per := make([]string, len(c.Platforms))
	for i, p := range c.Platforms {
		per[i] = fmt.Sprintf("%d %s", p.Nodes, p.Platform)
	}
	s := fmt.Sprintf("nodes: %d read (%s), ", c.Read, strings.Join(per, ", "))
	if without := c.Read - c.WithImage; without > 0 {
		return s + fmt.Sprintf("%d with an image, %d without", c.WithImage, without)
	}
	return s + "every one with an image"
}
