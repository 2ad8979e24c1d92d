package dockerfiles

import (
	"bytes"
	"slices"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefault(t *testing.T) {
	tests := []struct {
		image    string
		path     string
		copies   []string // COPY --from=context source -> destination
		contexts []string
	}{
		{
			image:    "gitlab-runner-helper",
			path:     "runner-helper/Dockerfile",
			copies:   []string{"binary_dir gitlab-runner-helper.${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner-helper 755"},
			contexts: []string{"binary_dir"},
		},
		{
			image: "gitlab-runner",
			path:  "runner/Dockerfile",
			copies: []string{
				"binary_dir gitlab-runner-${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner 755",
				"packaging_dir clear-docker-cache /usr/share/gitlab-runner/ 755",
			},
			contexts: []string{"binary_dir", "packaging_dir"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			path, data, ok := Default(tt.image)
			require.True(t, ok)
			assert.Equal(t, tt.path, path)
			assert.Equal(t, tt.contexts, RequiredContexts(tt.image))

			ast, err := parser.Parse(bytes.NewReader(data))
			require.NoError(t, err)
			stages, metaArgs, err := instructions.Parse(ast.AST, nil)
			require.NoError(t, err)
			require.Len(t, stages, 1, "one stage")
			require.Len(t, metaArgs, 1)
			assert.Equal(t, "BASE_IMAGE", metaArgs[0].Args[0].Key)
			assert.Equal(t, "$BASE_IMAGE", stages[0].BaseName)

			var copies, froms []string
			for _, cmd := range stages[0].Commands {
				switch c := cmd.(type) {
				case *instructions.ArgCommand:
					// TARGETOS, TARGETARCH: automatic platform arguments.
				case *instructions.CopyCommand:
					require.Len(t, c.SourcePaths, 1)
					copies = append(copies, c.From+" "+c.SourcePaths[0]+" "+c.DestPath+" "+c.Chmod)
					if !slices.Contains(froms, c.From) {
						froms = append(froms, c.From)
					}
				default:
					t.Errorf("line %d: instruction %s is outside the runtime-free subset the default recipes use", cmd.Location()[0].Start.Line, cmd.Name())
				}
			}
			assert.Equal(t, tt.copies, copies)
			assert.Equal(t, tt.contexts, froms, "RequiredContexts matches the COPY --from sources")
		})
	}
}

func TestDefaultUnknown(t *testing.T) {
	for _, name := range []string{"", "gitlab-runner-helper-fips", "GITLAB-RUNNER", "runner-helper"} {
		path, data, ok := Default(name)
		assert.False(t, ok, name)
		assert.Empty(t, path)
		assert.Nil(t, data)
		assert.Nil(t, RequiredContexts(name))
	}
}
