package main

import (
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/helperbuild/helperbuild/internal/release"
)

// keychain returns the credentials helperbuild uses: in GitLab CI,
// CI_REGISTRY_USER/CI_REGISTRY_PASSWORD for CI_REGISTRY; for every other
// registry (and outside CI) the Docker config keychain (DOCKER_CONFIG,
// ~/.docker/config.json, REGISTRY_AUTH_FILE, credential helpers), its
// files found from env.
func keychain(env Env) authn.Keychain {
	ci := ciKeychain{
		registry: env.Get("CI_REGISTRY"),
		user:     env.Get("CI_REGISTRY_USER"),
		password: env.Get("CI_REGISTRY_PASSWORD"),
	}
	docker := dockerKeychain(env)
	if ci.registry == "" || ci.user == "" {
		return docker
	}
	return authn.NewMultiKeychain(ci, docker)
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

// credentialSource says, for a registry that refused what helperbuild sent
// it, where those credentials came from and what to check; never the
// credentials themselves. It follows keychain's order.
func credentialSource(env Env, host string) string {
	ciHost, ciUser := env.Get("CI_REGISTRY"), env.Get("CI_REGISTRY_USER")
	if ciHost != "" && ciUser != "" && ciHost == host {
		return "helperbuild sent CI_REGISTRY_USER and CI_REGISTRY_PASSWORD (they are for CI_REGISTRY=" + host + "): check them"
	}
	docker := "the Docker config (~/.docker/config.json, REGISTRY_AUTH_FILE, credential helpers)"
	if dir := env.Get("DOCKER_CONFIG"); dir != "" {
		docker = "the Docker config in DOCKER_CONFIG=" + dir
	}
	var msg string
	if sentDockerCredentials(env, host) {
		msg = "helperbuild sent the credentials for " + host + " from " + docker + ": log in again with docker login " + host
	} else {
		msg = "helperbuild found no credentials for " + host + " in " + docker + " and sent none: log in with docker login " + host
	}
	if ciUser != "" && ciHost != host {
		where := "CI_REGISTRY is not set"
		if ciHost != "" {
			where = "CI_REGISTRY is " + ciHost
		}
		msg += "; CI_REGISTRY_USER applies only to CI_REGISTRY's host (" + where + "), not to " + host
	}
	return msg
}

// sentDockerCredentials reports whether the Docker config keychain has
// credentials for host.
func sentDockerCredentials(env Env, host string) bool {
	reg, err := name.NewRegistry(host)
	if err != nil {
		return false
	}
	auth, err := dockerKeychain(env).Resolve(reg)
	return err == nil && auth != authn.Anonymous
}

// dockerKeychain is the Docker config keychain, its files found from env.
func dockerKeychain(env Env) authn.Keychain {
	return release.DockerKeychain(release.DockerConfigFiles{DockerConfig: env.Get("DOCKER_CONFIG"), Home: env.Get("HOME"),
		RegistryAuthFile: env.Get("REGISTRY_AUTH_FILE"), XDGRuntimeDir: env.Get("XDG_RUNTIME_DIR"), XDGConfigHome: env.Get("XDG_CONFIG_HOME")})
}
