package dockerfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// File is a parsed and validated Dockerfile of one stage. It is immutable:
// Resolve and Apply may be called any number of times, concurrently.
type File struct {
	name     string
	escape   rune
	metaArgs []*instructions.ArgCommand // ARGs before FROM
	stage    instructions.Stage         // FROM, without its commands
	fromLine int
	cmds     []*parser.Node // instructions after FROM, parsed again by Apply
	named    []string       // --from names, in order of first use
	main     bool           // some COPY/ADD reads the build context
	args     []string       // every ARG name, in order of first declaration
}

// Parse parses and validates a Dockerfile. name is used in errors
// ("dockerfiles/runner/Dockerfile:12: ...").
func Parse(name string, r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkText(data); err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, locate(name, err)
	}
	f := &File{name: name, escape: res.EscapeToken}
	lint := newLinter()
	for _, n := range res.AST.Children {
		line := n.StartLine
		switch strings.ToLower(n.Value) {
		case "run":
			return nil, f.errorf(line, "RUN needs a container runtime; bake this step into the base image")
		case "onbuild":
			return nil, f.errorf(line, "ONBUILD is not supported: its trigger would run in images built FROM this one; drop it")
		}
		v, err := instructions.ParseInstructionWithLinter(n, lint)
		if err != nil {
			return nil, f.errorf(line, "%s", message(err))
		}
		switch c := v.(type) {
		case *instructions.Stage:
			if f.fromLine != 0 {
				return nil, f.errorf(line, "multi-stage builds are not supported; build the earlier stage's output outside "+
					"the Dockerfile (helperbuild cross-compiles Go binaries itself) and COPY it with --from=<named context> "+
					"(contexts: in helperbuild.yaml)")
			}
			f.stage, f.fromLine = *c, line
		case *instructions.ArgCommand:
			for _, kv := range c.Args {
				if !slices.Contains(f.args, kv.Key) {
					f.args = append(f.args, kv.Key)
				}
			}
			if f.fromLine == 0 {
				f.metaArgs = append(f.metaArgs, c)
			} else {
				f.cmds = append(f.cmds, n)
			}
		case instructions.Command:
			if f.fromLine == 0 {
				return nil, f.errorf(line, "%s before FROM: only ARG may come before FROM", strings.ToUpper(c.Name()))
			}
			if err := f.check(c); err != nil {
				return nil, f.errorf(line, "%s", err)
			}
			f.cmds = append(f.cmds, n)
		default:
			return nil, f.errorf(line, "%T is not a command", v)
		}
	}
	if f.fromLine == 0 {
		return nil, fmt.Errorf("%s: no FROM instruction; a Dockerfile needs exactly one FROM", name)
	}
	return f, nil
}

// NamedContexts returns the names used with COPY --from, in order of first
// use. Apply needs a directory for each in Contexts.Named.
func (f *File) NamedContexts() []string { return slices.Clone(f.named) }

// UsesMainContext reports whether a COPY or ADD reads the build context
// (Contexts.Main).
func (f *File) UsesMainContext() bool { return f.main }

// ArgNames returns every ARG the Dockerfile declares, before and after FROM,
// in order of first declaration. Target.Args naming anything else are unused.
func (f *File) ArgNames() []string { return slices.Clone(f.args) }

// check refuses what helperbuild cannot do. Values with variables are
// checked again by Apply once expanded.
func (f *File) check(cmd instructions.Command) error {
	switch c := cmd.(type) {
	case *instructions.CopyCommand:
		if err := checkCopyFlags("COPY", c.SourceContents, c.Chown, c.Chmod); err != nil {
			return err
		}
		if c.Parents {
			return errors.New("COPY --parents is not supported; copy each directory with its own COPY")
		}
		if len(c.ExcludePatterns) > 0 {
			return errors.New("COPY --exclude is not supported; copy from a context directory that holds only the wanted files")
		}
		if c.From == "" {
			f.main = true
			return nil
		}
		return f.checkFrom(c.From)
	case *instructions.AddCommand:
		if err := checkCopyFlags("ADD", c.SourceContents, c.Chown, c.Chmod); err != nil {
			return err
		}
		if len(c.ExcludePatterns) > 0 {
			return errors.New("ADD --exclude is not supported; copy from a context directory that holds only the wanted files")
		}
		if c.Checksum != "" || c.KeepGitDir != nil {
			return errors.New("ADD --checksum and --keep-git-dir apply to URL and git sources, which are not supported; " +
				"fetch them into a context directory and COPY them")
		}
		for _, src := range c.SourcePaths {
			if err := checkLocalSource(src); err != nil {
				return err
			}
		}
		f.main = true
	case *instructions.HealthCheckCommand:
		if c.Health.StartInterval != 0 {
			return errors.New("HEALTHCHECK --start-interval cannot be stored in the image config helperbuild writes; drop it")
		}
	case *instructions.StopSignalCommand:
		if !hasVariable(c.Signal) {
			return checkSignal(c.Signal)
		}
	case *instructions.ExposeCommand:
		for _, p := range c.Ports {
			if !hasVariable(p) {
				if _, err := parsePort(p); err != nil {
					return fmt.Errorf("EXPOSE %s: %w", p, err)
				}
			}
		}
	}
	return nil
}

func checkCopyFlags(kind string, heredocs []instructions.SourceContent, chown, chmod string) error {
	if len(heredocs) > 0 {
		return fmt.Errorf("%s with a heredoc is not supported; put the content in a file in a context directory and COPY it", kind)
	}
	if !hasVariable(chown) {
		if _, _, err := parseOwner(chown); err != nil {
			return fmt.Errorf("%s --chown=%s: %w", kind, chown, err)
		}
	}
	if !hasVariable(chmod) {
		if _, err := parseChmod(chmod); err != nil {
			return fmt.Errorf("%s --chmod=%s: %w", kind, chmod, err)
		}
	}
	return nil
}

// checkFrom accepts only names of contexts: not stage indexes or names, and,
// as in BuildKit, no variables.
func (f *File) checkFrom(from string) error {
	if hasVariable(from) {
		return fmt.Errorf("COPY --from=%s: variable expansion is not supported for --from; name a context (contexts: in helperbuild.yaml)", from)
	}
	if _, err := strconv.Atoi(from); err == nil || (f.stage.Name != "" && strings.EqualFold(from, f.stage.Name)) {
		return fmt.Errorf("COPY --from=%s refers to a build stage; multi-stage builds are not supported, "+
			"use --from=<named context> (contexts: in helperbuild.yaml)", from)
	}
	if !slices.Contains(f.named, from) {
		f.named = append(f.named, from)
	}
	return nil
}

// checkLocalSource refuses the remote sources ADD would fetch.
func checkLocalSource(src string) error {
	switch {
	case strings.HasPrefix(src, "http://"), strings.HasPrefix(src, "https://"):
		return fmt.Errorf("ADD %s: ADD of a URL needs the network at build time; download it into a context directory and COPY it", src)
	case strings.Contains(src, "://"), strings.HasPrefix(src, "git@"):
		return fmt.Errorf("ADD %s: ADD of a git repository or remote source is not supported; check it out into a context directory and COPY it", src)
	}
	return nil
}

// hasVariable reports whether s would change under expansion.
func hasVariable(s string) bool { return strings.ContainsRune(s, '$') }

// errorf formats an error at a line of the file.
func (f *File) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", f.name, line, fmt.Sprintf(format, args...))
}

// newLinter returns a linter that reports nothing. BuildKit's instruction
// parser dereferences a nil linter when a "# check=" comment precedes an
// instruction, so it must not be nil.
func newLinter() *linter.Linter { return linter.New(&linter.Config{}) }

// message is BuildKit's error text without its location wrapper.
func message(err error) string { return err.Error() }

// locate turns a BuildKit parser error into "name:line: message".
func locate(name string, err error) error {
	var le *parser.LocationError
	if errors.As(err, &le) && len(le.Locations) > 0 && len(le.Locations[0]) > 0 && le.Locations[0][0].Start.Line > 0 {
		return fmt.Errorf("%s:%d: %s", name, le.Locations[0][0].Start.Line, message(err))
	}
	return fmt.Errorf("%s: %s", name, message(err))
}

// newLex returns a word expander for this file's escape character.
func (f *File) newLex() *shell.Lex { return shell.NewLex(f.escape) }

// checkText refuses what is not text: BuildKit's word lexer would print
// its complaints about invalid UTF-8 and NUL to stderr.
func checkText(data []byte) error {
	for i, line := range bytes.Split(data, []byte("\n")) {
		if !utf8.Valid(line) {
			return fmt.Errorf("%d: not valid UTF-8 text", i+1)
		}
		if bytes.IndexByte(line, 0) >= 0 {
			return fmt.Errorf("%d: NUL byte in text", i+1)
		}
	}
	return nil
}
