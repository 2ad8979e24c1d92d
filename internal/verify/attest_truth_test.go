package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"

	"github.com/helperbuild/helperbuild/internal/attestspec"
)

// truthCheck fails on a base named by a host path anywhere and on a
// recipe that is not in the source commit with its digest, and passes,
// saying what it looked up, otherwise.
func TestTruthCheck(t *testing.T) {
	subject := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("1", 64)}
	recipe := []byte("images: []\n")
	rh, _, _ := v1.SHA256(strings.NewReader(string(recipe)))
	const commit = "0123456789abcdef0123456789abcdef01234567"
	prov := func(recipePath, baseName string) statementBlob {
		deps := []any{
			map[string]any{"uri": "git+https://example.com/p", "digest": map[string]string{"gitCommit": commit}},
			map[string]any{"uri": "pkg:oci/busybox@sha256:00", "name": baseName, "digest": map[string]string{"sha256": "00"}},
		}
		ext := map[string]any{}
		if recipePath != "" {
			ext["recipe"] = map[string]any{"path": recipePath, "digest": map[string]string{"sha256": rh.Hex}}
		}
		return statementBlob{predicateType: attestspec.PredicateSLSA, data: statementJSON(t, subject, attestspec.PredicateSLSA,
			map[string]any{"buildDefinition": map[string]any{"buildType": "x", "externalParameters": ext, "resolvedDependencies": deps}})}
	}
	git := func(_ context.Context, c, path string) ([]byte, error) {
		if c != commit {
			return nil, ErrNoCommit
		}
		if c == commit && path == "examples/gitlab-runner/helperbuild.yaml" {
			return recipe, nil
		}
		return nil, errors.New("fatal: path '" + path + "' does not exist in '" + c + "'")
	}
	base := map[string]string{specsv1.AnnotationBaseImageName: "registry.example.com/base:1"}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		statements  []statementBlob
		sourceFile  func(context.Context, string, string) ([]byte, error)
		wantFail    string
		wantPass    string
	}{
		{name: "recipe found", annotations: base, statements: []statementBlob{prov("examples/gitlab-runner/helperbuild.yaml", "registry.example.com/base:1")},
			sourceFile: git, wantPass: "recipe examples/gitlab-runner/helperbuild.yaml found in commit 0123456789ab with its digest"},
		{name: "recipe path from the working directory", annotations: base, statements: []statementBlob{prov("helperbuild.yaml", "registry.example.com/base:1")},
			sourceFile: git, wantFail: "the provenance's recipe helperbuild.yaml is not in commit " + commit},
		{name: "another repository", annotations: base, statements: []statementBlob{prov("helperbuild.yaml", "registry.example.com/base:1")},
			sourceFile: func(context.Context, string, string) ([]byte, error) { return nil, fmt.Errorf("x: %w", ErrNoCommit) },
			wantPass:   "recipe helperbuild.yaml not looked up: commit 0123456789ab is not in this checkout"},
		{name: "no checkout", annotations: base, statements: []statementBlob{prov("helperbuild.yaml", "registry.example.com/base:1")},
			wantPass: "recipe helperbuild.yaml not looked up: no checkout given"},
		{name: "layout base by path in the provenance", annotations: base, statements: []statementBlob{prov("", "oci:/tmp/x/layout:v1")},
			wantFail: `names the base "oci:/tmp/x/layout:v1", a path on the build host`},
		{name: "layout base by path in the annotation", annotations: map[string]string{specsv1.AnnotationBaseImageName: "oci-archive:/srv/base.tar"},
			statements: []statementBlob{prov("", "alpine:3")}, wantFail: `org.opencontainers.image.base.name annotation names the base "oci-archive:/srv/base.tar"`},
		{name: "layout base by ref name", annotations: map[string]string{specsv1.AnnotationBaseImageName: "alpine:3"},
			statements: []statementBlob{prov("", "alpine:3")}, wantPass: "no host paths; no recipe (config-free)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := truthCheck(context.Background(), tc.annotations, tc.statements, tc.sourceFile)
			var failed, passed []string
			for _, c := range checks {
				assert.Equal(t, CheckAttest, c.Name)
				if c.OK {
					passed = append(passed, c.Reason)
				} else {
					failed = append(failed, c.Reason)
				}
			}
			if tc.wantFail != "" {
				assert.Empty(t, passed)
				assert.Len(t, failed, 1)
				assert.Contains(t, strings.Join(failed, "\n"), tc.wantFail)
				return
			}
			assert.Empty(t, failed)
			assert.Len(t, passed, 1)
			assert.Contains(t, strings.Join(passed, "\n"), tc.wantPass)
		})
	}
	assert.Nil(t, truthCheck(context.Background(), base, nil, git), "no statements: attestCheck reports it")
}
