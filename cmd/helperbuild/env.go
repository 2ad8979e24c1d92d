package main

import (
	"strings"
)

// Env is the process environment, passed in so tests can set it.
type Env []string

// Get returns the value of key, or "".
func (e Env) Get(key string) string {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Map returns the environment as a map (for {{.Env.NAME}} templates).
func (e Env) Map() map[string]string {
	m := make(map[string]string, len(e))
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
