package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCredentialsNeverAppearInOutput pushes with CI_REGISTRY_PASSWORD to a
// registry that requires it (the base comes from there too), with the right
// and with a wrong password: neither password may appear on stdout, on
// stderr or in the metadata file.
func TestCredentialsNeverAppearInOutput(t *testing.T) {
	const user, right, wrong = "ci-user", "S3cr3t-right-Pa55", "S3cr3t-wrong-Pa55"
	host := relRegistry(t, user, right)
	relPushIndex(t, host+"/g/base:1", relAmd64Index(t), user, right)

	tests := []struct {
		name     string
		password string
		code     int
		want     string // on the last stderr line
	}{
		{name: "right password", password: right, code: 0},
		{name: "wrong password", password: wrong, code: 1, want: "authentication failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := relModule(t)
			t.Chdir(dir)
			meta := filepath.Join(t.TempDir(), "metadata.json")
			env := relEnv(t, "CI_REGISTRY="+host, "CI_REGISTRY_USER="+user, "CI_REGISTRY_PASSWORD="+tt.password)
			res := relRun(t, t.Context(), env, "push",
				"--platforms", "linux/amd64",
				"--base", host+"/g/base:1",
				"--tag", host+"/g/app:v1",
				"--metadata-file", meta,
				"./cmd/app")
			require.Equal(t, tt.code, res.code, res.stderr)

			outputs := map[string]string{"stdout": res.stdout, "stderr": res.stderr}
			if data, err := os.ReadFile(meta); err == nil {
				outputs["metadata file"] = string(data)
			} else if tt.code == 0 {
				t.Fatalf("no metadata file after a successful push: %v", err)
			}
			for where, text := range outputs {
				for _, secret := range []string{right, wrong, "UzNjcjN0"} { // and no base64 of "S3cr3t"
					assert.NotContains(t, text, secret, "%s leaks a password", where)
				}
			}
			lines := relLines(res.stderr)
			if tt.code == 0 {
				assert.Contains(t, outputs["metadata file"], host+"/g/app:v1")
				ref, err := name.ParseReference(host + "/g/app:v1")
				require.NoError(t, err)
				_, err = remote.Head(ref, remote.WithAuth(&authn.Basic{Username: user, Password: right}))
				assert.NoError(t, err, "the image was pushed")
			} else {
				require.NotEmpty(t, lines)
				assert.True(t, strings.HasPrefix(lines[len(lines)-1], "helperbuild: "))
				assert.Contains(t, lines[len(lines)-1], tt.want)
				assert.Empty(t, res.stdout)
			}
		})
	}
}
