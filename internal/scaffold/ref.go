package scaffold

import (
	"fmt"
	"regexp"
)

var (
	// releaseTag is a release's tag: v1.2.3, v1.2.3-rc.1; not what git
	// describe adds past a tag (-4-g1a2b3c4, -dirty).
	releaseTag  = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$`)
	describeEnd = regexp.MustCompile(`(-[0-9]+-g[0-9a-f]{4,}|-dirty)$`)
	// commitID is a full git commit id (SHA-1 or SHA-256 repositories).
	commitID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
)

// TemplateRef is the ref: at which the CI fragment includes the release
// template: the tag of the helperbuild release that writes it or, for a
// development build, its commit, so that a project's pipeline changes only
// when the project changes it. comment says which, for the line above it.
// version and revision are the writer's own (helperbuild version); an
// error when they name neither a release nor a commit.
func TemplateRef(version, revision string) (ref, comment string, err error) {
	if releaseTag.MatchString(version) && !describeEnd.MatchString(version) {
		return version, fmt.Sprintf("the template of helperbuild %s, which wrote this; move ref and the helperbuild version together", version), nil
	}
	if commitID.MatchString(revision) {
		return revision, fmt.Sprintf("the template at the commit of the development build of helperbuild (%s) that wrote this; change ref to a release tag", version), nil
	}
	return "", "", fmt.Errorf("this helperbuild knows neither its release tag nor its commit (version %q, revision %q), so the CI fragment could only follow a branch: use a release, or build helperbuild with make build (which stamps both)", version, revision)
}
