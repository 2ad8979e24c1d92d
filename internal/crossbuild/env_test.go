package crossbuild_test

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
	"github.com/helperbuild/helperbuild/internal/platform"
)

func TestEnv(t *testing.T) {
	tests := []struct {
		name     string
		base     []string
		platform string
		want     []string
	}{
		{
			name:     "stray target variables are dropped, platform last",
			base:     []string{"HOME=/root", "GOARCH=386", "GOOS=darwin", "GOARM=5", "GOAMD64=v4", "GOPPC64=power10", "GOFLAGS=-mod=mod"},
			platform: "linux/arm64",
			want:     []string{"HOME=/root", "GOFLAGS=-mod=mod", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64"},
		},
		{
			name:     "arm variant",
			base:     []string{"PATH=/bin", "GOARM=6"},
			platform: "linux/arm/v7",
			want:     []string{"PATH=/bin", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm", "GOARM=7"},
		},
		{
			name:     "amd64 level from the platform",
			base:     []string{"GOAMD64=v3", "GO386=softfloat"},
			platform: "linux/amd64",
			want:     []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOAMD64=v1"},
		},
		{
			name:     "caller's CGO_ENABLED is kept",
			base:     []string{"CGO_ENABLED=1", "PATH=/bin"},
			platform: "linux/s390x",
			want:     []string{"CGO_ENABLED=1", "PATH=/bin", "GOOS=linux", "GOARCH=s390x"},
		},
		{
			name:     "empty base",
			platform: "linux/riscv64",
			want:     []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=riscv64"},
		},
		{
			name:     "similar names are not target variables",
			base:     []string{"GOARCHIVE=x", "MY_GOARCH=386", "GOEXPERIMENT=boringcrypto"},
			platform: "linux/ppc64le",
			want:     []string{"GOARCHIVE=x", "MY_GOARCH=386", "GOEXPERIMENT=boringcrypto", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=ppc64le"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := platform.Parse(tt.platform)
			require.NoError(t, err)
			baseCopy := append([]string(nil), tt.base...)
			got, err := crossbuild.Env(tt.base, p)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, baseCopy, tt.base, "base must not be modified")
			for _, name := range []string{"GOOS=", "GOARCH=", "CGO_ENABLED="} {
				n := 0
				for _, kv := range got {
					if strings.HasPrefix(kv, name) {
						n++
					}
				}
				assert.Equal(t, 1, n, "%s appears once", name)
			}
		})
	}

	_, err := crossbuild.Env(nil, v1.Platform{OS: "windows", Architecture: "386"})
	assert.ErrorContains(t, err, "builds no container image for windows/386")
}
