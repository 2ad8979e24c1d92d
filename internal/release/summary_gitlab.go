package release

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// GitLab Runner's image names: the helper and the runner.
const (
	helperImageName = "gitlab-runner-helper"
	runnerImageName = "gitlab-runner"
)

// gitlabLines prints what an operator pastes to use img, published at the
// registry repository repo with the index tags tags (full references): for
// a helper the config.toml lines, for a runner the Helm chart's values.
func gitlabLines(w io.Writer, img product.Image, repo string, tags []string) {
	switch {
	case img.Contract == verify.ContractHelper || (img.Contract == "" && baseName(img.Name) == helperImageName):
		fmt.Fprintln(w, "  config.toml, pinned to this build:")
		fmt.Fprintln(w, "    [runners.kubernetes]")
		fmt.Fprintf(w, "      helper_image = %q\n", repo+"@"+img.Digest.String())
		if form := runnerVersionTag(img, repo, tags); form != "" {
			fmt.Fprintln(w, "  or following each runner's version (publish one per runner version; the helper must match its runner):")
			fmt.Fprintln(w, "    [runners.kubernetes]")
			fmt.Fprintf(w, "      helper_image = %q\n", form)
		}
	case img.Contract == verify.ContractRunner || (img.Contract == "" && baseName(img.Name) == runnerImageName):
		tag := PreferredTag(tags)
		if tag == "" {
			return
		}
		ref, err := name.NewTag(tag)
		if err != nil {
			return
		}
		fmt.Fprintln(w, "  Helm chart values (gitlab/gitlab-runner):")
		fmt.Fprintln(w, "    image:")
		fmt.Fprintf(w, "      registry: %s\n", ref.RegistryStr())
		fmt.Fprintf(w, "      image: %s\n", ref.RepositoryStr())
		fmt.Fprintf(w, "      tag: %s\n", ref.TagStr())
	}
}

// baseName is the last path element of an image name.
func baseName(image string) string { return image[strings.LastIndex(image, "/")+1:] }

// gitlabPlatformTag is GitLab Runner's helper tag scheme:
// [<flavor>-]<arch>-v<X.Y.Z...>.
var gitlabPlatformTag = regexp.MustCompile(`^(?:[a-z0-9]+-)?([a-z0-9_]+)-v([0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9_.-]*)$`)

// runnerVersionTag is the helper_image form that follows the runner's
// version, REPO:v${CI_RUNNER_VERSION}, when img's tags follow GitLab's
// scheme: every platform tagged <arch>-v<VERSION> for one VERSION, and an
// index tag v<VERSION> (or VERSION) that is the multi-arch one. "" when
// they do not.
func runnerVersionTag(img product.Image, repo string, tags []string) string {
	version := ""
	for _, p := range img.Platforms {
		found := false
		for _, t := range p.Tags {
			m := gitlabPlatformTag.FindStringSubmatch(t)
			if m == nil || m[1] != platform.GitLabArch(p.Platform) || (version != "" && m[2] != version) {
				continue
			}
			version, found = m[2], true
		}
		if !found {
			return ""
		}
	}
	if version == "" {
		return ""
	}
	for _, t := range tags {
		switch strings.TrimPrefix(t, repo+":") {
		case "v" + version:
			return repo + ":v${CI_RUNNER_VERSION}"
		case version:
			return repo + ":${CI_RUNNER_VERSION}"
		}
	}
	return ""
}
