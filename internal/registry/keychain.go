package registry

import (
	"context"
	"os"
	"path/filepath"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/configfile"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// DockerConfigFiles are the environment variables that say where the Docker
// config and Podman's auth file are, as the caller's environment has them.
type DockerConfigFiles struct {
	DockerConfig, Home, RegistryAuthFile, XDGRuntimeDir, XDGConfigHome string
}

// DockerKeychain is go-containerregistry's default keychain (the Docker
// config, else Podman's auth file) with its files found from f rather than
// the process's environment: authn.DefaultKeychain reads DOCKER_CONFIG, HOME
// and REGISTRY_AUTH_FILE with os.Getenv.
func DockerKeychain(f DockerConfigFiles) authn.Keychain { return newDockerKeychain(f) }

// dockerKeychain is DockerKeychain's.
type dockerKeychain struct {
	dockerConfig string // the directory of config.json: DOCKER_CONFIG, else ~/.docker
	authFiles    []string
}

func newDockerKeychain(f DockerConfigFiles) dockerKeychain {
	home := f.Home
	k := dockerKeychain{dockerConfig: f.DockerConfig}
	if k.dockerConfig == "" && home != "" {
		k.dockerConfig = filepath.Join(home, ".docker")
	}
	// Podman's places, in go-containerregistry's order.
	if f.RegistryAuthFile != "" {
		k.authFiles = append(k.authFiles, f.RegistryAuthFile)
	}
	if d := f.XDGRuntimeDir; d != "" {
		k.authFiles = append(k.authFiles, filepath.Join(d, "containers", "auth.json"))
	}
	configHome := f.XDGConfigHome
	if configHome == "" && home != "" {
		configHome = filepath.Join(home, ".config")
	}
	if configHome != "" {
		k.authFiles = append(k.authFiles, filepath.Join(configHome, "containers", "auth.json"))
	}
	return k
}

// load reads the first config file that exists; nil when none does.
func (k dockerKeychain) load() (*configfile.ConfigFile, error) {
	if k.dockerConfig != "" && isFile(filepath.Join(k.dockerConfig, config.ConfigFileName)) {
		return config.Load(k.dockerConfig) // a directory given: no environment read
	}
	for _, p := range k.authFiles {
		if !isFile(p) {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return config.LoadFromReader(f)
	}
	return nil, nil
}

func (k dockerKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), target)
}

// ResolveContext looks target up as go-containerregistry's default keychain
// does: by repository, then by registry (Docker Hub under its legacy key).
func (k dockerKeychain) ResolveContext(_ context.Context, target authn.Resource) (authn.Authenticator, error) {
	cf, err := k.load()
	if err != nil || cf == nil {
		return authn.Anonymous, err
	}
	for _, key := range []string{target.String(), target.RegistryStr()} {
		if key == name.DefaultRegistry {
			key = authn.DefaultAuthKey
		}
		cfg, err := cf.GetAuthConfig(key)
		if err != nil {
			return nil, err
		}
		ac := authn.AuthConfig{Username: cfg.Username, Password: cfg.Password, Auth: cfg.Auth,
			IdentityToken: cfg.IdentityToken, RegistryToken: cfg.RegistryToken}
		if ac != (authn.AuthConfig{}) {
			return authn.FromConfig(ac), nil
		}
	}
	return authn.Anonymous, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
