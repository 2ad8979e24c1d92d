package recipe

import (
	"errors"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestRender(t *testing.T) {
	vars := Vars{
		Version: "v17.10.0", Revision: "1a2b3c4d", Branch: "17-10-stable", Date: "2025-03-20T10:11:12Z",
		Env: map[string]string{"REGISTRY": "registry.example.com", "EMPTY": ""},
	}
	arm := v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}
	amd := v1.Platform{OS: "linux", Architecture: "amd64"}
	tests := []struct {
		name    string
		text    string
		data    map[string]any
		want    string
		wantErr string
	}{
		{name: "plain", text: "-w -s", data: vars.Data(), want: "-w -s"},
		{name: "vars", text: "{{.Version}} {{.Revision}} {{.Branch}} {{.Date}}", data: vars.Data(), want: "v17.10.0 1a2b3c4d 17-10-stable 2025-03-20T10:11:12Z"},
		{name: "env", text: "{{.Env.REGISTRY}}/base:{{.Env.EMPTY}}x", data: vars.Data(), want: "registry.example.com/base:x"},
		{name: "platform", text: "{{.OS}}-{{.Arch}}-{{.Variant}}-{{.GitLabArch}}", data: vars.PlatformData(arm), want: "linux-arm-v7-arm"},
		{name: "gitlab arch amd64", text: "{{.GitLabArch}}-{{.Version}}", data: vars.PlatformData(amd), want: "x86_64-v17.10.0"},
		{name: "string functions", text: `{{.Version | trimPrefix "v"}} {{.Branch | replace "-" "." | upper}} {{"X.tar" | trimSuffix ".tar" | lower}}`, data: vars.Data(), want: "17.10.0 17.10.STABLE x"},
		{name: "builtin functions", text: `{{if .Variant}}{{.Variant}}{{else}}none{{end}} {{printf "%.3s" .Revision}}`, data: vars.PlatformData(amd), want: "none 1a2"},
		{
			name: "misspelt field", text: "-X v={{.Verison}}", data: vars.Data(),
			wantErr: `build.ldflags "-X v={{.Verison}}": at <.Verison>: no field Verison here (fields: .Branch .Date .Env .Revision .Version)`,
		},
		{
			name: "platform field outside platform templates", text: "{{.OS}}", data: vars.Data(),
			wantErr: `build.ldflags "{{.OS}}": at <.OS>: no field OS here (fields: .Branch .Date .Env .Revision .Version)`,
		},
		{
			name: "unset env", text: "{{.Env.NOPE}}", data: vars.Data(),
			wantErr: `build.ldflags "{{.Env.NOPE}}": at <.Env.NOPE>: environment variable NOPE is not set`,
		},
		{
			name: "nil env", text: "{{.Env.HOME}}", data: Vars{}.Data(),
			wantErr: `build.ldflags "{{.Env.HOME}}": at <.Env.HOME>: environment variable HOME is not set`,
		},
		{name: "parse error", text: "{{.Version", data: vars.Data(), wantErr: `build.ldflags "{{.Version": unclosed action`},
		{name: "call error", text: `{{index .Env 1}}`, data: vars.Data(), wantErr: `build.ldflags "{{index .Env 1}}": at <index .Env 1>: error calling index: value has type int; should be string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render("build.ldflags", tt.text, tt.data)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestYAMLError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("yaml: line 3: mapping values are not allowed in this context"), "f.yaml:3: mapping values are not allowed in this context"},
		{errors.New("yaml: control characters are not allowed"), "f.yaml: control characters are not allowed"},
		{&yaml.TypeError{Errors: []string{"line 7: field ldflag not found in type recipe.rawBuild", "line 9: x"}}, "f.yaml:7: field ldflag not found in type recipe.rawBuild"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, yamlError("f.yaml", tt.err).Error())
	}
}
