package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeAuth writes a Docker config.json at path with user:password for host.
func writeAuth(t *testing.T, path, host, user, password string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	require.NoError(t, os.WriteFile(path, []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600))
}

// The Docker config is found from the environment given to Run, never the
// process's: a process DOCKER_CONFIG with other credentials is not read.
func TestKeychainReadsTheRunsEnvironment(t *testing.T) {
	const host = "registry.example.com"
	processDir, runDir, home := t.TempDir(), t.TempDir(), t.TempDir()
	writeAuth(t, filepath.Join(processDir, "config.json"), host, "process-user", "process-secret")
	writeAuth(t, filepath.Join(runDir, "config.json"), host, "run-user", "run-secret")
	writeAuth(t, filepath.Join(home, ".docker", "config.json"), host, "home-user", "home-secret")
	authFile := filepath.Join(t.TempDir(), "auth.json")
	writeAuth(t, authFile, host, "podman-user", "podman-secret")
	t.Setenv("DOCKER_CONFIG", processDir)
	t.Setenv("REGISTRY_AUTH_FILE", authFile)

	reg, err := name.NewRegistry(host)
	require.NoError(t, err)
	user := func(env ...string) string {
		t.Helper()
		a, err := keychain(Env(env)).Resolve(reg)
		require.NoError(t, err)
		cfg, err := a.Authorization()
		require.NoError(t, err)
		return cfg.Username
	}
	assert.Equal(t, "run-user", user("DOCKER_CONFIG="+runDir, "HOME="+home))
	assert.Equal(t, "home-user", user("HOME="+home))
	assert.Equal(t, "podman-user", user("HOME="+t.TempDir(), "REGISTRY_AUTH_FILE="+authFile))
	assert.Equal(t, "", user("HOME="+t.TempDir()), "nothing in the run's environment: anonymous")
	assert.Equal(t, "ci-user", user("DOCKER_CONFIG="+runDir, "CI_REGISTRY="+host, "CI_REGISTRY_USER=ci-user", "CI_REGISTRY_PASSWORD=x"))

	other, err := name.NewRegistry("other.example.com")
	require.NoError(t, err)
	a, err := keychain(Env{"DOCKER_CONFIG=" + runDir}).Resolve(other)
	require.NoError(t, err)
	assert.Equal(t, authn.Anonymous, a)
	assert.True(t, sentDockerCredentials(Env{"DOCKER_CONFIG=" + runDir}, host))
	assert.False(t, sentDockerCredentials(Env{"HOME=" + t.TempDir()}, host))
}
