package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/release"
)

// retryFlags are the flags of every command that talks to registries.
type retryFlags struct {
	retryCount int
	timeout    time.Duration
}

func (f *retryFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&f.retryCount, "retries", 5, "retry a transient registry failure (connection reset, timeout, 408, 429, 5xx) up to this many times, with exponential backoff; 0: never")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "abandon and retry a registry request that makes no progress for this long; 0: never")
}

// registry is how a run reaches registries: the flags, the credentials
// of env (see keychain) and insecure, the hosts --insecure-registry names.
func (f *retryFlags) registry(env Env, insecure []string) release.Registry {
	return release.Registry{Keychain: keychain(env), Insecure: insecure, UserAgent: "helperbuild/" + version,
		Retries: f.retryCount, Timeout: f.timeout}
}
