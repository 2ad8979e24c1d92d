package verify

import (
	"cmp"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// WindowsBuildLabel is the label the kubelet puts on Windows nodes with
// their build (major.minor.build, "10.0.20348"): what node selectors for
// Windows helper images match.
const WindowsBuildLabel = "node.kubernetes.io/windows-build"

// windowsBuild is a Windows node's build: WindowsBuildLabel, else
// major.minor.build of status.nodeInfo.kernelVersion (the kubelet reports
// "10.0.20348.2340" there on Windows). Neither is an error naming osImage,
// since a Windows node without its build cannot be matched with an entry.
func windowsBuild(k kubeNode) (string, error) {
	if v := strings.TrimSpace(k.Metadata.Labels[WindowsBuildLabel]); v != "" {
		b, ok := platform.OSBuild(v)
		if !ok {
			return "", fmt.Errorf("label %s=%q is not a Windows build (want e.g. 10.0.20348)", WindowsBuildLabel, v)
		}
		return b, nil
	}
	if b, ok := platform.OSBuild(strings.TrimSpace(k.Status.NodeInfo.KernelVersion)); ok {
		return b, nil
	}
	return "", fmt.Errorf("a Windows node (%s) without the %s label or a Windows status.nodeInfo.kernelVersion (%q): its build, which decides the image it can run, is unknown",
		cmp.Or(k.Status.NodeInfo.OSImage, "osImage not given"), WindowsBuildLabel, k.Status.NodeInfo.KernelVersion)
}

// runsWindows reports whether a Windows node (process isolation, the
// containerd default on Kubernetes) runs an image listed as img: the same
// architecture and an os.version of the node's build, as containerd's
// Windows matcher compares them. An entry without os.version is pulled but
// cannot be trusted to start, so it does not count.
func runsWindows(node, img v1.Platform) bool {
	if img.OSVersion == "" {
		return false
	}
	return platform.Satisfies(img, node)
}
