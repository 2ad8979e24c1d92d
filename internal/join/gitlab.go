package join

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// gitlabOrder is the order of GitLab Runner's helper architectures, the
// five it publishes by default first.
func gitlabOrder() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64"},
		{OS: "linux", Architecture: "arm", Variant: "v7"},
		{OS: "linux", Architecture: "ppc64le"},
		{OS: "linux", Architecture: "s390x"},
		{OS: "linux", Architecture: "riscv64"},
		{OS: "linux", Architecture: "loong64"},
	}
}

// GitLabHelperPlatforms are the platforms GitLabHelper names without a
// list: the five GitLab publishes a helper tag for in every release.
func GitLabHelperPlatforms() []v1.Platform { return gitlabOrder()[:5] }

// GitLab Runner's Windows helper bases: the variants of the per-release
// tags x86_64-<version>-<variant><release> (servercore is the one the
// runner picks for a Windows node).
const (
	WindowsServerCore = "servercore"
	WindowsNanoServer = "nanoserver"
)

// gitlabWindowsReleases maps a Windows build to the release name GitLab
// Runner's helper tags carry for it (helpers/container/helperimage:
// 1809 is Windows Server 2019, 21H2 is Windows Server 2022).
var gitlabWindowsReleases = map[string]string{
	"10.0.17763": "1809",
	"10.0.20348": "21H2",
}

// gitlabWindowsTag is the tag suffix of GitLab's Windows helper for p, a
// windows/amd64 platform with a build: "servercore21H2".
func gitlabWindowsTag(p v1.Platform, variant string) (string, error) {
	if p.Architecture != "amd64" || p.Variant != "" {
		return "", fmt.Errorf("--gitlab-helper: GitLab publishes Windows helpers for windows/amd64 only, not %s", platform.Format(p))
	}
	build, ok := platform.OSBuild(p.OSVersion)
	if !ok {
		return "", fmt.Errorf("--gitlab-helper: %s names no Windows build; GitLab publishes one helper per release: name it, e.g. windows/amd64:10.0.17763 (1809) or windows/amd64:10.0.20348 (21H2)", platform.Format(p))
	}
	rel, ok := gitlabWindowsReleases[build]
	if !ok {
		return "", fmt.Errorf("--gitlab-helper: GitLab publishes no Windows helper for build %s (it does for 10.0.17763, 1809, and 10.0.20348, 21H2)", build)
	}
	switch variant {
	case "", WindowsServerCore:
		return WindowsServerCore + rel, nil
	case WindowsNanoServer:
		return WindowsNanoServer + rel, nil
	}
	return "", fmt.Errorf("--gitlab-windows-base %q: want %s or %s", variant, WindowsServerCore, WindowsNanoServer)
}

// GitLabHelper names GitLab Runner's per-architecture helper tags of one
// runner version in repo: REPO:x86_64-v17.10.0, REPO:arm64-v17.10.0, ...,
// one per platform of ps (GitLabHelperPlatforms when empty). A Windows
// platform of ps (windows/amd64 with its build) names the per-release tag
// of windowsBase (servercore when "", else nanoserver):
// REPO:x86_64-v17.10.0-servercore21H2. version is the tag's version: "v17.10.0"
// ("17.10.0" gets its v) or a revision ("x86_64-<rev>", as GitLab tagged
// helpers before 16.8).
func GitLabHelper(repo, version string, ps []v1.Platform, windowsBase string, insecure []string) ([]string, error) {
	if _, err := imageref.ParseRepository(repo, insecure); err != nil {
		return nil, fmt.Errorf("--gitlab-helper %q: %w", repo, err)
	}
	v := strings.TrimSpace(version)
	if v == "" {
		return nil, fmt.Errorf("--gitlab-helper %s needs --version, the runner version its helper tags end in (v17.10.0)", repo)
	}
	if v[0] >= '0' && v[0] <= '9' && strings.Contains(v, ".") {
		v = "v" + v
	}
	if len(ps) == 0 {
		ps = GitLabHelperPlatforms()
	}
	if _, err := gitlabWindowsTag(v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}, windowsBase); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		p = platform.Normalize(p)
		tag := platform.GitLabArch(p) + "-" + v
		switch {
		case platform.IsWindows(p):
			suffix, err := gitlabWindowsTag(p, windowsBase)
			if err != nil {
				return nil, err
			}
			tag += "-" + suffix
		case platform.Index(gitlabOrder(), p) < 0:
			return nil, fmt.Errorf("--gitlab-helper: GitLab publishes no helper for %s (it does for %s and windows/amd64:10.0.17763, windows/amd64:10.0.20348)", platform.Format(p), platform.FormatList(gitlabOrder()))
		}
		if !imageref.ValidTag(tag) {
			return nil, fmt.Errorf("--version %q: %s is not a valid tag", version, tag)
		}
		out = append(out, repo+":"+tag)
	}
	return out, nil
}
