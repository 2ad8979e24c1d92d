package dockerfile

import (
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

var _ shell.EnvGetter = (*envList)(nil)

// envList is an ordered environment, the shell.EnvGetter word expansion reads.
type envList struct {
	keys []string
	vals map[string]string
}

func newEnvList(env []string) *envList {
	e := &envList{vals: map[string]string{}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e.set(k, v)
	}
	return e
}

// Get implements shell.EnvGetter.
func (e *envList) Get(key string) (string, bool) {
	v, ok := e.vals[key]
	return v, ok
}

// Keys implements shell.EnvGetter.
func (e *envList) Keys() []string { return slices.Clone(e.keys) }

func (e *envList) set(key, value string) {
	if _, ok := e.vals[key]; !ok {
		e.keys = append(e.keys, key)
	}
	e.vals[key] = value
}

// addEnv sets key in a KEY=VALUE list: in place when present, else appended.
func addEnv(env []string, key, value string) []string {
	for i, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			env[i] = key + "=" + value
			return env
		}
	}
	return append(env, key+"="+value)
}

// lineOf is the first line of a BuildKit location.
func lineOf(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}
