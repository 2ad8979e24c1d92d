package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
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

// TestVerifyNodesFivePlatforms: verify --nodes on a good 5-platform index
// whose images share a layer (read once, by every platform at once, as
// on a real base) passes with every node counted, at every --jobs; an
// index without s390x fails naming exactly that node. The whole output
// is compared, so a failure of any other check under load shows here with
// its reason (issue 37: a FAIL once under load, naming no node).
func TestVerifyNodesFivePlatforms(t *testing.T) {
	five := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "arm", Variant: "v7"},
		{OS: "linux", Architecture: "ppc64le"}, {OS: "linux", Architecture: "s390x"}}
	host := relRegistry(t, "", "")
	good, four := host+"/g/helper:five", host+"/g/helper:four"
	relPushIndex(t, good, testkit.SharedIndex(t, 64<<10, 4<<10, five...), "", "")
	relPushIndex(t, four, testkit.SharedIndex(t, 64<<10, 4<<10, five[:4]...), "", "")
	var items []string
	for _, n := range []struct{ name, arch string }{{"x1", "amd64"}, {"a1", "arm64"}, {"pi", "arm"}, {"p1", "ppc64le"}, {"z1", "s390x"}, {"x2", "amd64"}} {
		items = append(items, `{"metadata":{"name":"`+n.name+`","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"`+n.arch+`"}}}`)
	}
	nodes := filepath.Join(t.TempDir(), "nodes.json")
	require.NoError(t, os.WriteFile(nodes, []byte(`{"kind":"List","items":[`+strings.Join(items, ",")+`]}`), 0o644))
	const counted = "\nnodes: 6 read (2 linux/amd64, 1 linux/arm/v7, 1 linux/arm64, 1 linux/ppc64le, 1 linux/s390x), "

	for _, jobs := range []string{"1", "2", "5"} {
		res := relRun(t, t.Context(), relEnv(t), "verify", "--jobs", jobs, "--nodes", nodes, "--platforms", platformsFlag(five), good)
		require.Equal(t, 0, res.code, "--jobs %s:\n%s%s", jobs, res.stdout, res.stderr)
		assert.True(t, strings.HasPrefix(res.stdout, good+" "), res.stdout)
		assert.Contains(t, res.stdout, " PASS\n")
		assert.Contains(t, res.stdout, counted+"every one with an image\n")
		assert.Equal(t, 5, strings.Count(res.stdout, "  ok        ok      ok\n"), "every platform's coverage, config and arch:\n%s", res.stdout)
		assert.NotContains(t, res.stdout, "FAIL")
		assert.Empty(t, res.stderr)
	}

	res := relRun(t, t.Context(), relEnv(t), "verify", "--nodes", nodes, four)
	assert.Equal(t, 1, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, counted+"5 with an image, 1 without\n")
	assert.Contains(t, res.stdout, "\nnode z1 (linux/s390x): FAIL: has no image in this index\n")
	assert.Equal(t, 1, strings.Count(res.stdout, ": FAIL: "), "the node is the only failure:\n%s", res.stdout)
}

// platformsFlag is --platforms' value for ps.
func platformsFlag(ps []v1.Platform) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.OS + "/" + p.Architecture
		if p.Variant != "" {
			out[i] += "/" + p.Variant
		}
	}
	return strings.Join(out, ",")
}
