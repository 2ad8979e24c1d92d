package main

import (
	"github.com/google/go-containerregistry/pkg/authn"
)

// keychain returns the credentials helperbuild uses: in GitLab CI,
// CI_REGISTRY_USER/CI_REGISTRY_PASSWORD for CI_REGISTRY; for every other
// registry (and outside CI) the Docker config keychain (DOCKER_CONFIG,
// ~/.docker/config.json, REGISTRY_AUTH_FILE, credential helpers).
func keychain(env Env) authn.Keychain {
	ci := ciKeychain{
		registry: env.Get("CI_REGISTRY"),
		user:     env.Get("CI_REGISTRY_USER"),
		password: env.Get("CI_REGISTRY_PASSWORD"),
	}
	if ci.registry == "" || ci.user == "" {
		return authn.DefaultKeychain
	}
	return authn.NewMultiKeychain(ci, authn.DefaultKeychain)
}

// ciKeychain answers for exactly one registry.
type ciKeychain struct {
	registry, user, password string
}

func (k ciKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() != k.registry {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: k.user, Password: k.password}), nil
}

// String keeps the password out of any accidental %v.
func (k ciKeychain) String() string { return "CI_REGISTRY credentials for " + k.registry }
