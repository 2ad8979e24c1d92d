package attest

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	packageurl "github.com/package-url/packageurl-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Base purls in the purl-spec's canonical form ("/" as is in qualifier
// values, as packageurl-python writes them), and a layout's base named by
// what the layout calls it, never by the host path.
func TestBasePurl(t *testing.T) {
	d := hash(t, "base")
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	tests := []struct {
		name string
		base Base
		want string
	}{
		{"registry", Base{Ref: "registry.example.com:5000/group/base/helper:alpine", Digest: d},
			"pkg:oci/helper@" + d.String() + "?arch=amd64&os=linux&repository_url=registry.example.com:5000/group/base/helper&tag=alpine"},
		{"layout entry NAME:TAG", Base{Ref: "gitlab-runner-helper:v17.10.0", Layout: true, Digest: d},
			"pkg:oci/gitlab-runner-helper@" + d.String() + "?arch=amd64&os=linux&tag=v17.10.0"},
		{"layout entry with a tag alone", Base{Ref: "v17.10.0", Layout: true, Digest: d},
			"pkg:oci/base@" + d.String() + "?arch=amd64&os=linux&tag=v17.10.0"},
		{"layout entry by digest", Base{Ref: d.String(), Layout: true, Digest: d},
			"pkg:oci/base@" + d.String() + "?arch=amd64&os=linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.base.purl(amd64)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.String())
			back, err := packageurl.FromString(p.String())
			require.NoError(t, err)
			assert.Equal(t, p.Qualifiers["repository_url"], back.Qualifiers.Map()["repository_url"], "packageurl-go reads it back")
		})
	}
}
