package registry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/test/tokenauth"
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

// TestCheckPushNamesTheMissingScope: a token registry that refuses the
// upload with error="insufficient_scope" gets one line naming the scope,
// the user and what the token grants (a tag list read tells pull).
func TestCheckPushNamesTheMissingScope(t *testing.T) {
	tokens, err := tokenauth.New(tokenauth.Options{Users: []tokenauth.User{
		tokenauth.DeployToken("gitlab+deploy-token-1", "deploy-secret", "g")}})
	require.NoError(t, err)
	realm := httptest.NewServer(tokens.Handler())
	defer realm.Close()
	for _, tc := range []struct {
		name     string
		canRead  bool
		want     string
		user     string
		password string
	}{
		{"deploy token", true, "grants only pull there", "gitlab+deploy-token-1", "deploy-secret"},
		{"no read either", false, "grants neither pull nor push there", "gitlab+deploy-token-1", "deploy-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				challenge := `Bearer realm="` + strings.Replace(realm.URL, "127.0.0.1", "localhost", 1) + `/jwt/auth",service="container_registry"`
				bearer := strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
				switch {
				case !bearer:
				case r.Method == http.MethodGet && r.URL.Path == "/v2/":
					return
				case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/tags/list") && tc.canRead:
					_, _ = io.WriteString(w, `{"name":"g/helper","tags":[]}`)
					return
				default:
					challenge += `,scope="repository:g/helper:pull,push",error="insufficient_scope"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			}))
			defer reg.Close()
			repo, err := name.NewRepository(strings.TrimPrefix(reg.URL, "http://")+"/g/helper", name.Insecure)
			require.NoError(t, err)
			kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: tc.user, Password: tc.password})}
			err = CheckPush(context.Background(), repo, kc, http.DefaultTransport)
			require.Error(t, err)
			assert.Equal(t, "registry "+repo.RegistryStr()+": push to g/helper needs the push scope; the token for gitlab+deploy-token-1 "+tc.want+
				": use credentials that may write to it (a GitLab CI job token pushes only to its own project, a deploy token needs write_registry)", err.Error())
			var re *RegistryError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, Unauthorized, re.Kind)
			assert.NotContains(t, err.Error(), tc.password)
		})
	}
}

// TestCheckPushExplainsAPrivateIPRealm: a registry whose token realm is on
// a private IP literal other than its own host:port (a self-managed GitLab
// reached by IP) is refused by go-containerregistry; the error says so and
// names the way out.
func TestCheckPushExplainsAPrivateIPRealm(t *testing.T) {
	tokens, err := tokenauth.New(tokenauth.Options{Users: []tokenauth.User{tokenauth.Admin("root", "root-secret")}})
	require.NoError(t, err)
	realm := httptest.NewServer(tokens.Handler())
	defer realm.Close()
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm.URL+`/jwt/auth",service="container_registry"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer reg.Close()
	repo, err := name.NewRepository(strings.TrimPrefix(reg.URL, "http://")+"/g/helper", name.Insecure)
	require.NoError(t, err)
	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "root", Password: "root-secret"})}
	err = CheckPush(context.Background(), repo, kc, http.DefaultTransport)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "registry "+repo.RegistryStr()+": its token service (realm) is at 127.0.0.1, a private IP address that is not the registry's own host:port")
	assert.Contains(t, err.Error(), "external_url with a DNS name")
	assert.Equal(t, 1, strings.Count(err.Error(), "registry "+repo.RegistryStr()), "the registry named once: %s", err)
	assert.NotContains(t, err.Error(), "root-secret")
	assert.Zero(t, tokens.Stats().Issued, "no credentials reached the realm")
}
