package recipe

import (
	"strings"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// syntaxError reports a YAML syntax error at the line where the problem is.
//
// gopkg.in/yaml.v3 reports a parser error at the line where the enclosing
// block started (its "context mark"), so an indentation slip on line 38 of a
// mapping that begins on line 29 is reported at line 29. goccy/go-yaml's
// parser points at the offending token; it is asked for the position only,
// and only once yaml.v3 has refused the document. When the two parsers
// disagree (goccy accepts what yaml.v3 refused), yaml.v3's own message stands.
func syntaxError(file string, data []byte, err error) (out error) {
	// A parser that trips over input yaml.v3 already refused must not turn
	// a clear refusal into a crash.
	defer func() {
		if recover() != nil {
			out = yamlError(file, err)
		}
	}()
	_, perr := parser.ParseBytes(data, 0)
	var pe goccy.Error
	if perr == nil || !asGoccyError(perr, &pe) || pe.GetToken() == nil {
		return yamlError(file, err)
	}
	pos := pe.GetToken().Position
	msg := strings.ReplaceAll(pe.GetMessage(), "\t", `\t`)
	if strings.Contains(msg, "not allowed in this context") && startsLine(data, pos.Line, pos.Column) {
		msg += "; check this line's indentation against the lines above it"
	}
	return errAtColumn(file, pos.Line, pos.Column, msg)
}

// startsLine reports whether column (1-based) of line (1-based) is the first
// character of that line that is not a space: where an indentation slip shows.
func startsLine(data []byte, line, column int) bool {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return false
	}
	text := lines[line-1]
	return len(text)-len(strings.TrimLeft(text, " ")) == column-1
}

func asGoccyError(err error, target *goccy.Error) bool {
	e, ok := err.(goccy.Error)
	if ok {
		*target = e
	}
	return ok
}
