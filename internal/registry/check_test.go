package registry

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/testkit"
)

func TestCheckPush(t *testing.T) {
	host := testkit.Registry(t, testkit.BasicAuth("ci", "s3cret"))
	repo, err := name.NewRepository(host + "/g/helper")
	require.NoError(t, err)
	kc := func(user, pass string) authn.Keychain {
		return staticKeychain{authn.FromConfig(authn.AuthConfig{Username: user, Password: pass})}
	}
	require.NoError(t, CheckPush(context.Background(), repo, kc("ci", "s3cret"), http.DefaultTransport))
	err = CheckPush(context.Background(), repo, kc("ci", "wrong"), http.DefaultTransport)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "registry "+host)
	assert.Contains(t, err.Error(), "authentication failed")
	assert.NotContains(t, err.Error(), "wrong")
	assert.NotContains(t, err.Error(), "\n")
}

type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }
