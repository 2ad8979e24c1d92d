package dockerfile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// Target is what one build is for.
type Target struct {
	Platform      v1.Platform       // target platform
	BuildPlatform v1.Platform       // host platform; zero means the target platform, as in BuildKit
	Args          map[string]string // build args from the recipe (override ARG defaults)
}

// Stage is the Dockerfile's stage resolved for one Target, ready to Apply.
type Stage struct {
	Base     string      // expanded FROM reference, "scratch" for scratch
	Name     string      // the stage name of "FROM ... AS name", or ""
	Platform v1.Platform // the target platform, as platform.Normalize gives it
	Line     int         // line of FROM

	file   *File
	args   map[string]string // Target.Args
	global *envList          // global args: automatic ones, then ARGs before FROM
}

// Resolve evaluates global ARGs (with buildx's automatic TARGETPLATFORM,
// TARGETOS, TARGETARCH, TARGETVARIANT, BUILDPLATFORM, BUILDOS, BUILDARCH,
// BUILDVARIANT), expands the FROM image with them and returns the stage
// ready to apply. An ARG used in FROM without a value is an error naming the
// arg and saying how to set it.
func (f *File) Resolve(t Target) (*Stage, error) {
	if t.Platform.OS == "" || t.Platform.Architecture == "" {
		return nil, fmt.Errorf("%s: target platform %q needs an OS and an architecture, e.g. linux/arm64", f.name, platform.Format(t.Platform))
	}
	tp := platform.Normalize(t.Platform)
	bp := tp
	if t.BuildPlatform.OS != "" || t.BuildPlatform.Architecture != "" {
		bp = platform.Normalize(t.BuildPlatform)
	}
	global := automaticArgs(tp, bp, f.stage.Name, t.Args)
	lex := f.newLex()
	declared := map[string]bool{}
	for _, c := range f.metaArgs {
		line := lineOf(c.Location())
		for _, kv := range c.Args {
			declared[kv.Key] = true
			if v, ok := t.Args[kv.Key]; ok {
				global.set(kv.Key, v)
				continue
			}
			if kv.Value == nil {
				continue
			}
			v, _, err := lex.ProcessWord(*kv.Value, global)
			if err != nil {
				return nil, f.errorf(line, "ARG %s: %s", kv.Key, message(err))
			}
			global.set(kv.Key, v)
		}
	}

	st := &Stage{Name: f.stage.Name, Platform: tp, Line: f.fromLine, file: f, args: t.Args, global: global}
	res, err := lex.ProcessWordWithMatches(f.stage.BaseName, global)
	if err != nil {
		return nil, f.errorf(f.fromLine, "FROM %s: %s", f.stage.BaseName, message(err))
	}
	if err := f.checkFromArgs(f.stage.BaseName, res.Unmatched, declared); err != nil {
		return nil, err
	}
	if res.Result == "" {
		return nil, f.errorf(f.fromLine, "FROM %s: the base image name is empty", f.stage.BaseName)
	}
	st.Base = res.Result

	if f.stage.Platform != "" {
		res, err := lex.ProcessWordWithMatches(f.stage.Platform, global)
		if err != nil {
			return nil, f.errorf(f.fromLine, "FROM --platform=%s: %s", f.stage.Platform, message(err))
		}
		if err := f.checkFromArgs(f.stage.Platform, res.Unmatched, declared); err != nil {
			return nil, err
		}
		p, err := platforms.Parse(res.Result)
		if err != nil {
			return nil, f.errorf(f.fromLine, "FROM --platform=%s: %s", f.stage.Platform, err)
		}
		if got := platform.Normalize(v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}); !platform.Equal(got, tp) {
			return nil, f.errorf(f.fromLine, "FROM --platform=%s is %s, but this build is for %s; helperbuild takes each platform's "+
				"base from the same platform (drop --platform or use $TARGETPLATFORM)", f.stage.Platform, platform.Format(got), platform.Format(tp))
		}
	}
	return st, nil
}

// checkFromArgs refuses variables in FROM that have no value, unless they
// are written with a default or alternative (${X:-y}, ${X-y}, ${X:+y}, ${X+y}).
func (f *File) checkFromArgs(word string, unmatched map[string]struct{}, declared map[string]bool) error {
	names := make([]string, 0, len(unmatched))
	for n := range unmatched {
		if !hasModifier(word, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	n := names[0]
	if declared[n] {
		return f.errorf(f.fromLine, "FROM %s: build arg %s has no value; set it under args: in helperbuild.yaml "+
			"(args: {%s: ...}) or give it a default (ARG %s=...)", word, n, n, n)
	}
	return f.errorf(f.fromLine, "FROM %s: %s is not declared; add \"ARG %s\" before FROM and set it under args: in helperbuild.yaml", word, n, n)
}

func hasModifier(word, name string) bool {
	for _, m := range []string{":-", "-", ":+", "+"} {
		if strings.Contains(word, "${"+name+m) {
			return true
		}
	}
	return false
}

// automaticArgs are the global args BuildKit defines for every build; a
// build arg of the same name overrides one, as in BuildKit.
func automaticArgs(tp, bp v1.Platform, stage string, overrides map[string]string) *envList {
	if stage == "" {
		stage = "default"
	}
	env := newEnvList(nil)
	for _, kv := range [...][2]string{
		{"BUILDPLATFORM", platform.Format(bp)},
		{"BUILDOS", bp.OS},
		{"BUILDOSVERSION", bp.OSVersion},
		{"BUILDARCH", bp.Architecture},
		{"BUILDVARIANT", bp.Variant},
		{"TARGETPLATFORM", platform.Format(tp)},
		{"TARGETOS", tp.OS},
		{"TARGETOSVERSION", tp.OSVersion},
		{"TARGETARCH", tp.Architecture},
		{"TARGETVARIANT", tp.Variant},
		{"TARGETSTAGE", stage},
	} {
		v := kv[1]
		if o, ok := overrides[kv[0]]; ok {
			v = o
		}
		env.set(kv[0], v)
	}
	return env
}
