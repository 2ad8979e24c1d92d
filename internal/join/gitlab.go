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

// GitLabHelper names GitLab Runner's per-architecture helper tags of one
// runner version in repo: REPO:x86_64-v17.10.0, REPO:arm64-v17.10.0, ...,
// one per platform of ps (GitLabHelperPlatforms when empty). version is
// the tag's suffix: "v17.10.0" ("17.10.0" gets its v) or a revision
// ("x86_64-<rev>", as GitLab tagged helpers before 16.8).
func GitLabHelper(repo, version string, ps []v1.Platform, insecure []string) ([]string, error) {
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
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		p = platform.Normalize(p)
		if platform.Index(gitlabOrder(), p) < 0 {
			return nil, fmt.Errorf("--gitlab-helper: GitLab publishes no helper for %s (it does for %s)", platform.Format(p), platform.FormatList(gitlabOrder()))
		}
		tag := platform.GitLabArch(p) + "-" + v
		if !imageref.ValidTag(tag) {
			return nil, fmt.Errorf("--version %q: %s is not a valid tag", version, tag)
		}
		out = append(out, repo+":"+tag)
	}
	return out, nil
}
