package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// TestVerifySinglePlatformImage: a per-arch tag (what a runner pulls when
// helper_image names one) verifies when exactly its platform is expected;
// without an expectation it fails with one line and the way out.
func TestVerifySinglePlatformImage(t *testing.T) {
	host := relRegistry(t, "", "")
	ref := host + "/g/helper:arm64-v17.10.0"
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, testkit.Image(t, v1.Platform{OS: "linux", Architecture: "arm64"}, 256, 1)))

	res := relRun(t, t.Context(), relEnv(t), "verify", "--platforms", "linux/arm64", ref)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, " PASS\n")
	assert.NotContains(t, res.stdout, "index was expected")

	res = relRun(t, t.Context(), relEnv(t), "verify", ref)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stdout, "--platforms linux/arm64", "the table says the way out")
	assert.Equal(t, []string{"helperbuild: " + ref + " failed verification: 1 coverage failure on linux/arm64"}, relLines(res.stderr))

	res = relRun(t, t.Context(), relEnv(t), "verify", "--platforms", "linux/amd64", ref)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stdout, "linux/arm64 coverage: FAIL: image is linux/arm64, expected linux/amd64")
}

// twoPlatformsAndARiscvNode pushes a linux/amd64 + linux/arm64 index and
// writes a node list whose one node is riscv64 (no image for it).
func twoPlatformsAndARiscvNode(t *testing.T) (ref, nodes string) {
	t.Helper()
	ref = relRegistry(t, "", "") + "/g/helper:v1"
	relPushIndex(t, ref, testkit.Index(t, 256, 1, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"}), "", "")
	nodes = filepath.Join(t.TempDir(), "nodes.json")
	require.NoError(t, os.WriteFile(nodes, []byte(`{"items":[{"metadata":{"name":"vf2","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"riscv64"}}}]}`), 0o644))
	return ref, nodes
}

// TestVerifyJSON: findings are objects, once each, and stderr has the one
// error line and no pointer to a report.
func TestVerifyJSON(t *testing.T) {
	ref, nodes := twoPlatformsAndARiscvNode(t)

	res := relRun(t, t.Context(), relEnv(t), "verify", "--format", "json", "--nodes", nodes, "--platforms", "linux/amd64,linux/s390x", ref)
	assert.Equal(t, 1, res.code)
	rep := decodeVerifyJSON(t, []byte(res.stdout), ref)
	assert.False(t, rep.OK)
	var fails []verify.Finding
	for _, f := range rep.Findings {
		if f.Severity == verify.SeverityFail {
			fails = append(fails, f)
		} else {
			assert.Equal(t, verify.SeverityWarning, f.Severity, f) // random layers carry no BuildKit history
		}
	}
	assert.Equal(t, []verify.Finding{
		{Platform: "linux/arm64", Check: "coverage", Reason: "in the index but not expected", Severity: "fail"},
		{Platform: "linux/s390x", Check: "coverage", Reason: "missing from the index", Severity: "fail"},
		{Platform: "linux/riscv64", Check: "nodes", Node: "vf2", Reason: "has no image in this index", Severity: "fail"},
	}, fails)
	assert.Contains(t, res.stdout, `"path": "",`, "path is always there")
	lines := relLines(res.stderr)
	require.Len(t, lines, 1, res.stderr)
	assert.NotContains(t, lines[0], "report")
	assert.Equal(t, "helperbuild: "+ref+" failed verification: 3 coverage/nodes failures on linux/arm64,linux/s390x", lines[0])

	// The table shows the same findings, each once.
	res = relRun(t, t.Context(), relEnv(t), "verify", "--nodes", nodes, "--platforms", "linux/amd64,linux/s390x", ref)
	assert.Equal(t, 1, res.code)
	for _, want := range []string{
		"linux/arm64 coverage: FAIL: in the index but not expected\n",
		"linux/s390x coverage: FAIL: missing from the index\n",
		"node vf2 (linux/riscv64): FAIL: has no image in this index\n",
	} {
		assert.Equal(t, 1, strings.Count(res.stdout, want), "%q once in\n%s", want, res.stdout)
	}
}

// TestBuildCheckFailurePrintsTable: when the contract check fails during a
// build, stderr shows verify's table with one line per finding, and the
// error line stays short.
func TestBuildCheckFailurePrintsTable(t *testing.T) {
	dir := relModule(t)
	relWrite(t, dir, map[string]string{
		"helperbuild.yaml": strings.Replace(recipeYAML, "    tags: [v1]\n", "    tags: [v1]\n    contract: helper\n", 1),
		"Dockerfile":       okDockerfile,
	})
	t.Chdir(dir)
	res := relRun(t, t.Context(), relEnv(t), "build", "--output", "oci:"+filepath.Join(t.TempDir(), "out"))
	require.Equal(t, 1, res.code, res.stderr)
	assert.Empty(t, res.stdout)
	lines := relLines(res.stderr)
	last := lines[len(lines)-1]
	assert.Equal(t, "helperbuild: image app failed verification, nothing was published: 27 contract failures on linux/amd64 | fix each image's Dockerfile for the failures listed above (the contract's rules: docs/gitlab-image-contract.md) and run again", last)
	assert.Regexp(t, `(?m)^PLATFORM\s+DIGEST\s+CONFIG\s+ARCH\s+CONTRACT$`, res.stderr)
	assert.Regexp(t, `(?m)^linux/amd64\s+[0-9a-f]{12}\s+ok\s+ok\s+FAIL$`, res.stderr)
	assert.Contains(t, res.stderr, "\nlinux/amd64 contract: FAIL: /bin/bash missing: gitlab-runner-build runs every stage with /bin/bash\n")
	for _, l := range lines {
		assert.Less(t, len(l), 300, "no line is a dump: %q", l)
	}
}

// TestVerifyMetadataFile: verify --metadata-file writes the report in the
// build's style (schemaVersion, images by reference), the same whatever
// --format prints, and also when a check fails; an unwritable path fails
// before the image is read.
func TestVerifyMetadataFile(t *testing.T) {
	ref, nodes := twoPlatformsAndARiscvNode(t)
	meta := filepath.Join(t.TempDir(), "verify.json")

	type file struct {
		SchemaVersion int
		Images        []struct {
			Reference string
			OK        bool
			Digest    string
			Findings  []map[string]any
			Platforms []struct {
				OK       bool
				Platform string
				Digest   string
				Checks   []map[string]any
			}
		}
	}
	read := func() file {
		var f file
		data, err := os.ReadFile(meta)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &f), string(data))
		return f
	}

	res := relRun(t, t.Context(), relEnv(t), "verify", "--metadata-file", meta, "--platforms", "linux/amd64,linux/arm64", ref)
	require.Equal(t, 0, res.code, res.stderr)
	f := read()
	assert.Equal(t, 1, f.SchemaVersion)
	require.Len(t, f.Images, 1)
	img := f.Images[0]
	assert.Equal(t, ref, img.Reference)
	assert.True(t, img.OK)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, img.Digest)
	assert.Contains(t, res.stdout, img.Digest[len("sha256:"):][:12], "the table printed names the same index")
	require.Len(t, img.Platforms, 2)
	assert.Equal(t, "linux/arm64", img.Platforms[1].Platform)
	assert.NotEmpty(t, img.Platforms[1].Checks)
	for _, finding := range img.Findings {
		assert.Equal(t, "warning", finding["severity"], "a passing report has warnings at most")
	}

	res = relRun(t, t.Context(), relEnv(t), "verify", "--format", "json", "--metadata-file", meta, "--nodes", nodes, ref)
	assert.Equal(t, 1, res.code, "a node without an image fails verify")
	f = read()
	require.Len(t, f.Images, 1)
	assert.False(t, f.Images[0].OK, "the file is written when a check fails too")
	var failed []map[string]any
	for _, finding := range f.Images[0].Findings {
		if finding["severity"] == "fail" {
			failed = append(failed, finding)
		}
	}
	require.Len(t, failed, 1)
	assert.Equal(t, "vf2", failed[0]["node"])

	afile := filepath.Join(t.TempDir(), "afile")
	require.NoError(t, os.WriteFile(afile, nil, 0o644))
	res = relRun(t, t.Context(), relEnv(t), "verify", "--metadata-file", filepath.Join(afile, "v.json"), ref)
	assert.Equal(t, 2, res.code)
	assert.Equal(t, 1, strings.Count(res.stderr, "\n"), res.stderr)
	assert.Contains(t, res.stderr, "--metadata-file")
	assert.Contains(t, res.stderr, "is not a directory")
}
