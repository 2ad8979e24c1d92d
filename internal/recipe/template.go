package recipe

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
)

// Vars are the release's values that templates see. The command fills them
// from flags and the CI environment; this package reads no environment.
type Vars struct {
	Version  string
	Revision string
	Branch   string
	Date     string            // RFC 3339 in UTC, e.g. 2025-03-20T10:11:12Z
	Env      map[string]string // .Env.NAME; a missing NAME is an error
}

// Data returns the template data every template sees: .Version, .Revision,
// .Branch, .Date and .Env.
func (v Vars) Data() map[string]any {
	env := v.Env
	if env == nil {
		env = map[string]string{}
	}
	return map[string]any{
		"Version":  v.Version,
		"Revision": v.Revision,
		"Branch":   v.Branch,
		"Date":     v.Date,
		"Env":      env,
	}
}

// PlatformData returns Data plus the fields of platform p: .OS, .Arch,
// .Variant ("" when p has none) and .GitLabArch (x86_64, arm64, arm, ...).
func (v Vars) PlatformData(p v1.Platform) map[string]any {
	d := v.Data()
	d["OS"] = p.OS
	d["Arch"] = p.Architecture
	d["Variant"] = p.Variant
	d["GitLabArch"] = platform.GitLabArch(p)
	return d
}

// Render renders one template text with data, using missingkey=error so a
// misspelt field ({{.Verison}}) or an unset {{.Env.NAME}} is an error rather
// than "<no value>". name says where the text comes from ("build.ldflags",
// "--ldflags"); the one-line error names it and the text.
func Render(name, text string, data any) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	tmpl, err := parseTemplate(text)
	if err != nil {
		return "", fmt.Errorf("%s %q: %s", name, text, templateMessage(err, data))
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s %q: %s", name, text, templateMessage(err, data))
	}
	return b.String(), nil
}

// checkTemplate parses text without executing it, to report syntax errors
// while reading the config.
func checkTemplate(name, text string) error {
	if !strings.Contains(text, "{{") {
		return nil
	}
	if _, err := parseTemplate(text); err != nil {
		return fmt.Errorf("%s %q: %s", name, text, templateMessage(err, nil))
	}
	return nil
}

const templateName = "t"

func parseTemplate(text string) (*template.Template, error) {
	return template.New(templateName).Option("missingkey=error").Funcs(templateFuncs).Parse(text)
}

// templateFuncs are the string helpers a release needs, e.g.
// {{.Version | trimPrefix "v"}} for GitLab Runner's VERSION, which is
// 17.10.0 while its tag is v17.10.0. Arguments come first so they chain.
var templateFuncs = template.FuncMap{
	"trimPrefix": func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
	"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
	"replace":    func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
	"lower":      strings.ToLower,
	"upper":      strings.ToUpper,
}

var (
	// template: t:1:9: executing "t" at <.Verison>: map has no entry for key "Verison"
	execErrRE = regexp.MustCompile(`^template: ` + templateName + `:\d+(?::\d+)?: executing "` + templateName + `" at <([^>]*)>: (.*)$`)
	// template: t:1: unexpected "}" in operand
	parseErrRE = regexp.MustCompile(`^template: ` + templateName + `:\d+(?::\d+)?: (.*)$`)
	noEntryRE  = regexp.MustCompile(`^map has no entry for key "(.*)"$`)
)

// templateMessage turns a text/template error into a short message, naming
// the fields data has when a field is missing.
func templateMessage(err error, data any) string {
	msg := progress.JoinLines(err.Error(), " ")
	if m := execErrRE.FindStringSubmatch(msg); m != nil {
		at, detail := m[1], m[2]
		if k := noEntryRE.FindStringSubmatch(detail); k != nil {
			if strings.HasPrefix(at, ".Env.") {
				return fmt.Sprintf("at <%s>: environment variable %s is not set", at, k[1])
			}
			if d, ok := data.(map[string]any); ok {
				return fmt.Sprintf("at <%s>: no field %s here (fields: %s)", at, k[1], fieldList(d))
			}
		}
		return fmt.Sprintf("at <%s>: %s", at, detail)
	}
	if m := parseErrRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return msg
}

func fieldList(d map[string]any) string {
	keys := slices.Sorted(maps.Keys(d))
	for i, k := range keys {
		keys[i] = "." + k
	}
	return strings.Join(keys, " ")
}
