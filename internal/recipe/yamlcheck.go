package recipe

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/helperbuild/helperbuild/internal/progress"
)

// shapeChecker walks a YAML node tree against the Go type it will be decoded
// into, before decoding, so that unknown keys, duplicate keys and values of
// the wrong shape are reported with their line and the known keys. It
// records the line of every value it visits, by path ("images[0].tags[1]").
type shapeChecker struct {
	file  string
	lines map[string]int
}

func (c *shapeChecker) errorf(line int, format string, args ...any) error {
	return errAt(c.file, line, fmt.Sprintf(format, args...))
}

// check verifies that n has the shape of t. path names n in messages; "" is
// the document root.
func (c *shapeChecker) check(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		return c.errorf(n.Line, "%s: YAML aliases (*%s) are not supported; write the value out", where(path), n.Value)
	}
	c.lines[path] = n.Line
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // an empty value is the zero value; required fields are checked later
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return c.errorf(n.Line, "%s: want a mapping (key: value), got %s", where(path), shapeName(n))
		}
		known, fields := structKeys(t)
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if err := c.key(k, path, seen); err != nil {
				return err
			}
			field, ok := fields[k.Value]
			if !ok {
				return c.errorf(k.Line, "unknown key %q %s (known: %s)", k.Value, inWhere(path), strings.Join(known, ", "))
			}
			if err := c.check(v, field, join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return c.errorf(n.Line, "%s: want a mapping (key: value), got %s", where(path), shapeName(n))
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if err := c.key(k, path, seen); err != nil {
				return err
			}
			if k.Value == "" {
				return c.errorf(k.Line, "%s: empty key", where(path))
			}
			if err := c.check(v, t.Elem(), join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return c.errorf(n.Line, "%s: want a list, got %s", where(path), shapeName(n))
		}
		for i, item := range n.Content {
			if err := c.check(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return c.errorf(n.Line, "%s: want a string, got %s", where(path), shapeName(n))
		}
	default:
		return fmt.Errorf("recipe: no shape check for %s", t) // a defect in this package's types
	}
	return nil
}

// key checks one mapping key: a plain scalar, not seen before in this mapping.
func (c *shapeChecker) key(k *yaml.Node, path string, seen map[string]int) error {
	if k.Kind == yaml.AliasNode {
		return c.errorf(k.Line, "%s: YAML aliases (*%s) are not supported; write the value out", where(path), k.Value)
	}
	if k.Kind != yaml.ScalarNode {
		return c.errorf(k.Line, "%s: a key must be a plain string, got %s", where(path), shapeName(k))
	}
	if first, dup := seen[k.Value]; dup {
		return c.errorf(k.Line, "duplicate key %q %s (first at line %d)", k.Value, inWhere(path), first)
	}
	seen[k.Value] = k.Line
	return nil
}

// structKeys returns the yaml keys of struct type t in field order and the
// type of each.
func structKeys(t reflect.Type) ([]string, map[string]reflect.Type) {
	var known []string
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		known = append(known, name)
		fields[name] = f.Type
	}
	return known, fields
}

func shapeName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	default:
		return "something else"
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func inWhere(path string) string {
	if path == "" {
		return "at top level"
	}
	return "in " + path
}

// errAt formats a one-line error "file:line: msg" ("file: msg" without a line).
func errAt(file string, line int, msg string) error {
	msg = progress.JoinLines(msg, " ")
	if line > 0 {
		return fmt.Errorf("%s:%d: %s", file, line, msg)
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// errAtColumn is errAt with a column: "file:38:3: message".
func errAtColumn(file string, line, column int, msg string) error {
	if line <= 0 || column <= 0 {
		return errAt(file, line, msg)
	}
	return fmt.Errorf("%s:%d:%d: %s", file, line, column, progress.JoinLines(msg, " "))
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError rewrites an error of gopkg.in/yaml.v3 ("yaml: line 3: mapping
// values are not allowed in this context", or a multi-line *yaml.TypeError)
// into one line "file:3: mapping values are not allowed in this context".
func yamlError(file string, err error) error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	m := yamlLineRE.FindStringSubmatch(strings.TrimSpace(msgs[0]))
	if m == nil {
		return errAt(file, 0, strings.TrimPrefix(msgs[0], "yaml: "))
	}
	line, _ := strconv.Atoi(m[1])
	return errAt(file, line, m[2])
}
