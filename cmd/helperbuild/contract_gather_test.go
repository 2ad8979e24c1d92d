package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// TestContractFailuresAllReported: two images whose Dockerfiles break
// their contracts on both platforms. The run checks all four units, prints
// every finding of each (issue 25: one unit failed, the others said only
// "stopped:"), exits non-zero and tags nothing.
func TestContractFailuresAllReported(t *testing.T) {
	testdata, err := filepath.Abs("testdata")
	require.NoError(t, err)
	host, _ := startRegistry(t)
	dir := helloModule(t)
	for _, f := range []string{"helper.Dockerfile", "runner.Dockerfile"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(`FROM scratch
ARG TARGETOS
ARG TARGETARCH
COPY --from=bins --chmod=755 hello-${TARGETOS}-${TARGETARCH} /usr/bin/hello
ENTRYPOINT ["/usr/bin/hello"]
`), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helperbuild.yaml"), []byte(`platforms: [linux/amd64, linux/arm64]
binaries:
  - main: ./cmd/hello
    output: hello-{{.OS}}-{{.Arch}}
images:
  - name: helper
    dockerfile: helper.Dockerfile
    contexts: {bins: "binaries:"}
    contract: helper
    tags: [v1]
  - name: runner
    dockerfile: runner.Dockerfile
    contexts: {bins: "binaries:"}
    contract: runner
    tags: [v1]
`), 0o644))
	code, _, stderr := run(t, baseEnv("CI_REGISTRY_IMAGE="+host+"/group"), "push", "--progress", "plain", "--no-cache")
	assert.NotEqual(t, 0, code)
	// Every unit was checked: none was stopped by another's failure.
	assert.NotContains(t, stderr, "stopped:")
	// The report, from the first image's table on: both images, both platforms each.
	at := strings.Index(stderr, "image helper - FAIL")
	require.GreaterOrEqual(t, at, 0, stderr)
	golden(t, filepath.Join(testdata, "contract-failures.golden"), mask(stderr[at:], host))
	for _, img := range []string{"helper", "runner"} {
		_, err := remote.Head(testkit.Ref(t, host+"/group/"+img+":v1"))
		assert.Error(t, err, "%s:v1 must not be tagged", img)
	}
}

// mask replaces the registry's random port and the images' digests.
func mask(s, host string) string {
	s = strings.ReplaceAll(s, host, "REGISTRY")
	return shortHex.ReplaceAllString(s, "${1}DIGEST")
}

// shortHex is a table's short digest column: twelve hex digits after a space.
var shortHex = regexp.MustCompile(`( )[0-9a-f]{12}\b`)
