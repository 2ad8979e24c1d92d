// Package common holds the build's version information, set at link time:
//
//	-X example.com/gitlab-runner/common.VERSION=17.10.0
//	-X example.com/gitlab-runner/common.REVISION=1a2b3c4d
//	-X example.com/gitlab-runner/common.BRANCH=17-10-stable
//	-X example.com/gitlab-runner/common.BUILT=2025-03-20T10:11:12Z
package common

import (
	"fmt"
	"runtime"
)

// Set with -ldflags -X; the defaults mark a development build.
var (
	VERSION  = "development version"
	REVISION = "HEAD"
	BRANCH   = "HEAD"
	BUILT    = "now"
)

// VersionText is what --version prints, in GitLab Runner's layout.
func VersionText() string {
	return fmt.Sprintf("Version:      %s\nGit revision: %s\nGit branch:   %s\nGO version:   %s\nBuilt:        %s\nOS/Arch:      %s/%s\n",
		VERSION, REVISION, BRANCH, runtime.Version(), BUILT, runtime.GOOS, runtime.GOARCH)
}
