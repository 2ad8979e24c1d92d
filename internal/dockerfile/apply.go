package dockerfile

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// historyComment is the comment buildx puts on every history entry of a Dockerfile build.
const historyComment = "buildkit.dockerfile.v0"

// defaultPath is BuildKit's PATH for Linux images whose base sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Contexts are the directories COPY and ADD read from.
type Contexts struct {
	Main  string            // directory for COPY/ADD without --from (the build context); "" = none (then such COPY is an error)
	Named map[string]string // --from=name -> directory

	// BaseHasDir reports whether the base image has a directory at an
	// absolute path. It decides whether a destination without a trailing
	// slash is a directory and whether WORKDIR creates its directory. Nil
	// means: nothing for scratch, else a list of standard directories.
	BaseHasDir func(path string) bool
}

// Result is the image a Stage yields on top of its base.
type Result struct {
	Config v1.Config // resulting runtime config
	Author string    // set by MAINTAINER, else "" (keep the base's)
	Steps  []Step    // one per instruction that buildx records in history, in order
}

// Step is one history entry and, when it has a layer, that layer's files.
type Step struct {
	// History is as buildx records it; Created is left zero for the caller.
	History v1.History
	// Entries are the files of the layer, non-nil exactly when the step has
	// a layer (History.EmptyLayer false). It may be empty: buildx writes an
	// empty layer for WORKDIR of a directory that exists. Parent
	// directories are not listed.
	Entries []rootfs.Entry
}

// applier is the running state of one Apply.
type applier struct {
	s      *Stage
	lex    *shell.Lex
	ctx    Contexts
	cfg    v1.Config
	env    *envList        // the running environment: Env, then ENV and ARG
	dirs   map[string]bool // directories this Dockerfile created or knows of
	cmdSet bool            // a CMD came earlier in this Dockerfile
	res    *Result
}

// Apply interprets the stage's instructions on top of the base image's
// config (an empty v1.Config for scratch).
func (s *Stage) Apply(base v1.Config, ctx Contexts) (*Result, error) {
	cfg := cloneConfig(base)
	if len(cfg.OnBuild) > 0 {
		return nil, s.file.errorf(s.Line, "base image %s has ONBUILD triggers %q, which helperbuild cannot run; use a base without them", s.Base, cfg.OnBuild)
	}
	if !slices.ContainsFunc(cfg.Env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		cfg.Env = append(cfg.Env, "PATH="+defaultPath)
	}
	if s.Base == "scratch" && cfg.WorkingDir == "" {
		cfg.WorkingDir = "/"
	}
	a := &applier{s: s, lex: s.file.newLex(), ctx: ctx, cfg: cfg, env: newEnvList(cfg.Env),
		dirs: map[string]bool{"/": true}, res: &Result{}}
	if cfg.WorkingDir != "" {
		a.dirs[path.Clean("/"+cfg.WorkingDir)] = true
	}
	lint := newLinter()
	for _, n := range s.file.cmds {
		v, err := instructions.ParseInstructionWithLinter(n, lint)
		if err != nil {
			return nil, s.file.errorf(n.StartLine, "%s", message(err))
		}
		cmd, ok := v.(instructions.Command)
		if !ok {
			return nil, s.file.errorf(n.StartLine, "%T is not a command", v)
		}
		if err := a.dispatch(cmd); err != nil {
			return nil, s.file.errorf(n.StartLine, "%s", err)
		}
	}
	a.res.Config = a.cfg
	return a.res, nil
}

func (a *applier) dispatch(cmd instructions.Command) error {
	unset := map[string]struct{}{}
	if ex, ok := cmd.(instructions.SupportsSingleWordExpansion); ok {
		if _, isArg := cmd.(*instructions.ArgCommand); !isArg {
			err := ex.Expand(func(word string) (string, error) {
				r, um, err := a.lex.ProcessWord(word, a.env)
				maps.Copy(unset, um)
				return r, err
			})
			if err != nil {
				return fmt.Errorf("%s", message(err))
			}
		}
	}
	switch c := cmd.(type) {
	case *instructions.ArgCommand:
		return a.arg(c)
	case *instructions.EnvCommand:
		msg := "ENV"
		for _, kv := range c.Env {
			msg += " " + kv.String()
			a.env.set(kv.Key, kv.Value)
			a.cfg.Env = addEnv(a.cfg.Env, kv.Key, kv.Value)
		}
		a.record(msg, nil)
	case *instructions.LabelCommand:
		if a.cfg.Labels == nil {
			a.cfg.Labels = map[string]string{}
		}
		msg := "LABEL"
		for _, kv := range c.Labels {
			a.cfg.Labels[kv.Key] = kv.Value
			msg += " " + kv.String()
		}
		a.record(msg, nil)
	case *instructions.MaintainerCommand:
		a.res.Author = c.Maintainer
		a.record("MAINTAINER "+c.Maintainer, nil)
	case *instructions.UserCommand:
		a.cfg.User = c.User
		a.record("USER "+c.User, nil)
	case *instructions.WorkdirCommand:
		return a.workdir(c.Path)
	case *instructions.CmdCommand:
		args := a.withShell(c.ShellDependantCmdLine)
		a.cfg.Cmd = args
		a.cfg.ArgsEscaped = true
		a.cmdSet = true
		a.record(fmt.Sprintf("CMD %q", args), nil)
	case *instructions.EntrypointCommand:
		args := a.withShell(c.ShellDependantCmdLine)
		a.cfg.Entrypoint = args
		if !a.cmdSet {
			a.cfg.Cmd = nil
		}
		a.record(fmt.Sprintf("ENTRYPOINT %q", args), nil)
	case *instructions.ShellCommand:
		a.cfg.Shell = slices.Clone(c.Shell)
		a.record(fmt.Sprintf("SHELL %v", c.Shell), nil)
	case *instructions.ExposeCommand:
		return a.expose(c.Ports)
	case *instructions.VolumeCommand:
		if a.cfg.Volumes == nil {
			a.cfg.Volumes = map[string]struct{}{}
		}
		for _, v := range c.Volumes {
			if v == "" {
				return fmt.Errorf("VOLUME specified can not be an empty string")
			}
			a.cfg.Volumes[v] = struct{}{}
		}
		a.record(fmt.Sprintf("VOLUME %v", c.Volumes), nil)
	case *instructions.StopSignalCommand:
		if err := checkSignal(c.Signal); err != nil {
			return err
		}
		a.cfg.StopSignal = c.Signal
		a.record("STOPSIGNAL "+c.Signal, nil)
	case *instructions.HealthCheckCommand:
		h := c.Health
		a.cfg.Healthcheck = &v1.HealthConfig{Test: slices.Clone(h.Test), Interval: h.Interval, Timeout: h.Timeout,
			StartPeriod: h.StartPeriod, Retries: h.Retries}
		a.record(fmt.Sprintf("HEALTHCHECK %+v", *h), nil)
	case *instructions.CopyCommand:
		return a.copy(copyOp{kind: "COPY", from: c.From, params: c.SourcesAndDest, chown: c.Chown, chmod: c.Chmod}, unset)
	case *instructions.AddCommand:
		return a.copy(copyOp{kind: "ADD", params: c.SourcesAndDest, chown: c.Chown, chmod: c.Chmod,
			unpack: c.Unpack == nil || *c.Unpack}, unset)
	default:
		return fmt.Errorf("%s is not supported", strings.ToUpper(cmd.Name()))
	}
	return nil
}

// arg declares in-stage ARGs as BuildKit's dispatchArg: a build arg wins,
// else the default (expanded), else the global value of the same name.
func (a *applier) arg(c *instructions.ArgCommand) error {
	parts := make([]string, 0, len(c.Args))
	for _, kv := range c.Args {
		var value *string
		if v, ok := a.s.args[kv.Key]; ok {
			value = &v
		} else if kv.Value != nil {
			v, _, err := a.lex.ProcessWord(*kv.Value, a.env)
			if err != nil {
				return fmt.Errorf("ARG %s: %s", kv.Key, message(err))
			}
			value = &v
		} else if v, ok := a.s.global.Get(kv.Key); ok {
			value = &v
		}
		part := kv.Key
		if value != nil {
			part += "=" + *value
			if kv.Key != "BUILDKIT_SBOM_SCAN_CONTEXT" && kv.Key != "BUILDKIT_SBOM_SCAN_STAGE" {
				a.env.set(kv.Key, *value)
			}
		}
		parts = append(parts, part)
	}
	a.record("ARG "+strings.Join(parts, " "), nil)
	return nil
}

// workdir sets WorkingDir relative to the previous one. Like buildx, any
// WORKDIR but "/" has a layer, holding the directory unless it is known.
func (a *applier) workdir(p string) error {
	wd := p
	if !path.IsAbs(wd) {
		cur := a.cfg.WorkingDir
		if cur == "" {
			cur = "/"
		}
		wd = path.Join("/", cur, wd)
	}
	wd = path.Clean(wd)
	a.cfg.WorkingDir = wd
	if wd == "/" {
		a.record("WORKDIR "+wd, nil)
		return nil
	}
	entries := []rootfs.Entry{}
	if !a.isDir(wd) {
		uid, gid, err := parseOwner(a.cfg.User)
		if err != nil {
			return fmt.Errorf("WORKDIR %s creates the directory owned by USER %s: %w; or create the directory in the base image", wd, a.cfg.User, err)
		}
		entries = append(entries, rootfs.Entry{Path: wd, Kind: rootfs.Dir, Mode: 0o755, UID: uid, GID: gid})
	}
	a.record("WORKDIR "+wd, entries)
	a.dirs[wd] = true
	return nil
}

func (a *applier) expose(ports []string) error {
	var specs []string
	for _, p := range ports {
		words, err := a.lex.ProcessWords(p, a.env)
		if err != nil {
			return fmt.Errorf("EXPOSE %s: %s", p, message(err))
		}
		for _, w := range words {
			ps, err := parsePort(w)
			if err != nil {
				return fmt.Errorf("EXPOSE %s: %w", w, err)
			}
			specs = append(specs, ps...)
		}
	}
	if a.cfg.ExposedPorts == nil {
		a.cfg.ExposedPorts = map[string]struct{}{}
	}
	for _, p := range specs {
		a.cfg.ExposedPorts[p] = struct{}{}
	}
	a.record(fmt.Sprintf("EXPOSE %v", specs), nil)
	return nil
}

// withShell returns an exec-form command line as given and a shell form
// behind SHELL (default /bin/sh -c).
func (a *applier) withShell(c instructions.ShellDependantCmdLine) []string {
	if !c.PrependShell {
		return c.CmdLine
	}
	sh := slices.Clone(a.cfg.Shell)
	if len(sh) == 0 {
		sh = []string{"/bin/sh", "-c"}
	}
	return append(sh, strings.Join(c.CmdLine, " "))
}

// record appends a history step; entries non-nil means it has a layer.
func (a *applier) record(createdBy string, entries []rootfs.Entry) {
	for _, e := range entries {
		for d := e.Path; d != "/"; d = path.Dir(d) {
			if d != e.Path || e.Kind == rootfs.Dir {
				a.dirs[d] = true
			}
		}
	}
	a.res.Steps = append(a.res.Steps, Step{
		History: v1.History{CreatedBy: createdBy, Comment: historyComment, EmptyLayer: entries == nil},
		Entries: entries,
	})
}

// isDir reports whether p is a directory known to exist at this point.
func (a *applier) isDir(p string) bool {
	if a.dirs[p] {
		return true
	}
	if a.ctx.BaseHasDir != nil {
		return a.ctx.BaseHasDir(p)
	}
	return a.s.Base != "scratch" && standardDirs[p]
}

// standardDirs are assumed to exist in any non-scratch base when
// Contexts.BaseHasDir is nil: replacing one with a file, or re-declaring
// /tmp as 0755, would break the image.
var standardDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true, "/lib64": true,
	"/media": true, "/mnt": true, "/opt": true, "/proc": true, "/root": true, "/run": true, "/sbin": true,
	"/srv": true, "/sys": true, "/tmp": true, "/usr": true, "/usr/bin": true, "/usr/lib": true,
	"/usr/lib64": true, "/usr/libexec": true, "/usr/local": true, "/usr/local/bin": true, "/usr/local/lib": true,
	"/usr/local/sbin": true, "/usr/local/share": true, "/usr/sbin": true, "/usr/share": true, "/var": true,
	"/var/cache": true, "/var/lib": true, "/var/log": true, "/var/tmp": true,
}

// cloneConfig deep-copies what Apply may change.
func cloneConfig(c v1.Config) v1.Config {
	out := c
	out.Cmd = slices.Clone(c.Cmd)
	out.Entrypoint = slices.Clone(c.Entrypoint)
	out.Env = slices.Clone(c.Env)
	out.Shell = slices.Clone(c.Shell)
	out.OnBuild = slices.Clone(c.OnBuild)
	out.Labels = maps.Clone(c.Labels)
	out.Volumes = maps.Clone(c.Volumes)
	out.ExposedPorts = maps.Clone(c.ExposedPorts)
	if c.Healthcheck != nil {
		h := *c.Healthcheck
		h.Test = slices.Clone(h.Test)
		out.Healthcheck = &h
	}
	return out
}
