package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// NodeVariantLabel is the node label ParseNodes reads the CPU variant from
// ("v6", "v7", "v8"; "v2".."v4" for amd64). Kubernetes has no standard
// label for it; operators who run ARMv6 boards set it themselves.
const NodeVariantLabel = "helperbuild.io/arch-variant"

// Node is a cluster node and the platform its container runtime pulls.
type Node struct {
	Name    string `json:"name"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	Variant string `json:"variant,omitempty"`
	// OSVersion is a Windows node's build (10.0.20348), which the image's
	// os.version must match (see winnodes.go); "" on Linux.
	OSVersion string `json:"osVersion,omitempty"`
}

// Platform is the node's platform, normalised: an arm node without a variant
// is arm/v7, as containerd assumes; a Windows node carries its build.
func (n Node) Platform() v1.Platform {
	return platform.Normalize(v1.Platform{OS: n.OS, Architecture: n.Arch, Variant: n.Variant, OSVersion: n.OSVersion})
}

// kubeNode is the part of a Kubernetes Node object ParseNodes reads.
type kubeNode struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		NodeInfo struct {
			Architecture    string `json:"architecture"`
			OperatingSystem string `json:"operatingSystem"`
			KernelVersion   string `json:"kernelVersion"`
			OSImage         string `json:"osImage"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// ParseNodes reads `kubectl get nodes -o json` (a List or NodeList with
// items) or a single Node (`kubectl get node NAME -o json`). The OS and
// architecture come from the labels kubernetes.io/os and kubernetes.io/arch
// (the kubelet sets them), then beta.kubernetes.io/os and
// beta.kubernetes.io/arch, then status.nodeInfo.operatingSystem and
// .architecture. The variant comes from NodeVariantLabel when set; without
// it an arm node counts as arm/v7. A Windows node's build comes from the
// label node.kubernetes.io/windows-build, else nodeInfo.kernelVersion
// (windowsBuild).
func ParseNodes(r io.Reader) ([]Node, error) {
	var doc struct {
		kubeNode
		Items []kubeNode `json:"items"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	items := doc.Items
	if doc.Kind == "Node" {
		items = []kubeNode{doc.kubeNode}
	} else if doc.Items == nil {
		return nil, fmt.Errorf("node list: kind %q has no items; want the output of kubectl get nodes -o json", doc.Kind)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("node list: no nodes in it, so nothing to check; give the output of kubectl get nodes -o json run against the cluster (the right context?)")
	}
	out := make([]Node, 0, len(items))
	for i, k := range items {
		n, err := k.node()
		if err != nil {
			return nil, fmt.Errorf("node list: item %d: %w", i, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func (k kubeNode) node() (Node, error) {
	l := k.Metadata.Labels
	// firstTrimmed is cmp.Or of the trimmed values: a label of spaces is
	// not given.
	firstTrimmed := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	n := Node{
		Name:    k.Metadata.Name,
		OS:      firstTrimmed(l["kubernetes.io/os"], l["beta.kubernetes.io/os"], k.Status.NodeInfo.OperatingSystem),
		Arch:    firstTrimmed(l["kubernetes.io/arch"], l["beta.kubernetes.io/arch"], k.Status.NodeInfo.Architecture),
		Variant: firstTrimmed(l[NodeVariantLabel]),
	}
	switch {
	case n.Name == "":
		return n, fmt.Errorf("no metadata.name")
	case n.OS == "" || n.Arch == "":
		return n, fmt.Errorf("node %q: no kubernetes.io/os and kubernetes.io/arch labels nor status.nodeInfo", n.Name)
	case strings.Contains(n.OS+n.Arch+n.Variant, "/"):
		return n, fmt.Errorf("node %q: malformed platform %s/%s/%s", n.Name, n.OS, n.Arch, n.Variant)
	}
	if n.OS == "windows" {
		build, err := windowsBuild(k)
		if err != nil {
			return n, fmt.Errorf("node %q: %w", n.Name, err)
		}
		n.OSVersion = build
	}
	return n, nil
}

// nodesWithoutImage is a problem, in node-name order, for each node whose
// runtime finds no image among listed; what is its reason.
func nodesWithoutImage(nodes []Node, listed []v1.Platform, what string) []Finding {
	var out []Finding
	sorted := append([]Node(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, n := range sorted {
		np := n.Platform()
		served := false
		for _, p := range listed {
			served = served || runs(np, platform.Normalize(p))
		}
		if !served {
			out = append(out, Finding{Platform: platform.Format(np), Check: CheckNodes, Node: n.Name, Reason: what, Severity: SeverityFail})
		}
	}
	return out
}

// runs reports whether a node of platform node pulls and runs an image
// listed as img (both normalised), the way containerd's platform matcher
// decides for the node's own architecture: same OS and architecture, and for
// arm and amd64 a variant no newer than the node's (an arm/v7 node runs
// arm/v6, an amd64/v3 node runs amd64). Cross-architecture fallbacks
// (arm64 to arm, amd64 to 386) are not counted: they depend on the hardware.
func runs(node, img v1.Platform) bool {
	if node.OS != img.OS || node.Architecture != img.Architecture {
		return false
	}
	if node.OS == "windows" {
		return runsWindows(node, img)
	}
	switch node.Architecture {
	case "arm", "amd64":
		nv, nerr := variantLevel(node.Variant)
		iv, ierr := variantLevel(img.Variant)
		if nerr == nil && ierr == nil {
			return iv <= nv
		}
	}
	return node.Variant == img.Variant
}

// variantLevel turns "v7" into 7 and "" into 1 (amd64's baseline; arm's
// empty variant is normalised to v7 before this is called).
func variantLevel(v string) (int, error) {
	if v == "" {
		return 1, nil
	}
	digits, ok := strings.CutPrefix(v, "v")
	if !ok {
		return 0, fmt.Errorf("variant %q", v)
	}
	return strconv.Atoi(digits)
}
