package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/testkit"
)

// TestVerifyNodeCounts: verify --nodes says how many nodes it read and of
// which platforms, in the table and the JSON; an empty node list is an
// error naming the file and the way out, not a silent pass (issue 25).
func TestVerifyNodeCounts(t *testing.T) {
	testdata, err := filepath.Abs("testdata")
	require.NoError(t, err)
	host := relRegistry(t, "", "")
	ref := host + "/g/helper:v1"
	relPushIndex(t, ref, testkit.Index(t, 256, 1, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"}), "", "")
	dir := t.TempDir()
	node := func(name, arch string) string {
		return `{"metadata":{"name":"` + name + `","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"` + arch + `"}}}`
	}
	five := filepath.Join(dir, "nodes.json")
	require.NoError(t, os.WriteFile(five, []byte(`{"kind":"List","items":[`+strings.Join([]string{
		node("x1", "amd64"), node("a1", "arm64"), node("x2", "amd64"), node("a2", "arm64"), node("x3", "amd64")}, ",")+`]}`), 0o644))

	res := relRun(t, t.Context(), relEnv(t), "verify", "--nodes", five, ref)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "\nnodes: 5 read (3 linux/amd64, 2 linux/arm64), every one with an image\n")

	amd64Only := host + "/g/helper:amd64"
	relPushIndex(t, amd64Only, testkit.Index(t, 256, 1, v1.Platform{OS: "linux", Architecture: "amd64"}), "", "")
	res = relRun(t, t.Context(), relEnv(t), "verify", "--nodes", five, "--platforms", "linux/amd64", amd64Only)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stdout, "node a1 (linux/arm64): FAIL: has no image in this index\n")
	assert.Contains(t, res.stdout, "\nnodes: 5 read (3 linux/amd64, 2 linux/arm64), 3 with an image, 2 without\n")

	res = relRun(t, t.Context(), relEnv(t), "verify", "--format", "json", "--nodes", five, ref)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"nodes": {
        "read": 5,
        "platforms": [
          {
            "platform": "linux/amd64",
            "nodes": 3
          },
          {
            "platform": "linux/arm64",
            "nodes": 2
          }
        ],
        "withImage": 5
      }`)

	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"items":[]}`), 0o644))
	res = relRun(t, t.Context(), relEnv(t), "verify", "--nodes", empty, ref)
	assert.Equal(t, 2, res.code)
	assert.Empty(t, res.stdout)
	golden(t, filepath.Join(testdata, "verify-nodes-empty.golden"), strings.ReplaceAll(res.stderr, dir, "DIR"))
}
