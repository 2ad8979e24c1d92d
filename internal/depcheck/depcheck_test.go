package depcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pkg is what the check needs to know of one package of the module.
type pkg struct {
	path        string              // inside the module: "internal/layer"
	imports     map[string][]string // import path -> files of the package, not tests
	testImports map[string][]string // the same for _test.go files
	envReads    []string            // "file:line: os.Getenv" in files that are not tests
	lines       int                 // lines of the files that are not tests
	longFuncs   []longFunc          // functions over maxFuncLines in files that are not tests
	httpCalls   []httpCall          // registryIO calls in files that are not tests
	// sessionCalls are uses of sessionParts and sessionMethods in files
	// that are not tests.
	sessionCalls []httpCall
}

// httpCall is one use of a registryIO function: "remote.Head" at file:line.
type httpCall struct {
	file, call string
	line       int
}

// TestImportRules checks every package of the module against the rules.
func TestImportRules(t *testing.T) {
	root, module := moduleRoot(t)
	pkgs, err := load(root)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(pkgs), len(roles)-1, "the walk found the module's packages")
	for _, problem := range check(module, pkgs) {
		t.Error(problem)
	}
}

// The check fails for each kind of breach; a check that cannot fail would
// pass any tree.
func TestCheckCatchesBreaches(t *testing.T) {
	require.LessOrEqual(t, len(commandImports), maxCommandImports, "the command's imports")
	const m = "example.com/mod"
	base := func() []pkg {
		var out []pkg
		for p := range roles {
			out = append(out, pkg{path: p})
		}
		return out
	}
	with := func(edit func(map[string]*pkg)) []pkg {
		pkgs := base()
		byPath := map[string]*pkg{}
		for i := range pkgs {
			byPath[pkgs[i].path] = &pkgs[i]
		}
		edit(byPath)
		return pkgs
	}
	imp := func(path string, files ...string) map[string][]string { return map[string][]string{path: files} }
	tests := []struct {
		name string
		pkgs []pkg
		want string
	}{
		{"the table itself passes", base(), ""},
		{"a stage imports a stage", with(func(p map[string]*pkg) { p["internal/dockerfile"].imports = imp(m+"/internal/layer", "apply.go") }),
			"internal/dockerfile (stage) imports internal/layer (stage) in apply.go: a stage imports only shared and io packages"},
		{"a stage imports release", with(func(p map[string]*pkg) { p["internal/verify"].imports = imp(m+"/internal/release", "x.go") }),
			"internal/verify (stage) imports internal/release (wiring)"},
		{"a stage imports a source", with(func(p map[string]*pkg) { p["internal/publish"].imports = imp(m+"/internal/build", "x.go") }),
			"internal/publish (stage) imports internal/build (source) in x.go: a stage imports only shared and io packages"},
		{"a source imports release", with(func(p map[string]*pkg) { p["internal/build"].imports = imp(m+"/internal/release", "x.go") }),
			"internal/build (source) imports internal/release (wiring) in x.go: a source imports only stages, io, shared and source packages"},
		{"a shared package imports a stage", with(func(p map[string]*pkg) { p["internal/platform"].imports = imp(m+"/internal/recipe", "x.go") }),
			"internal/platform (shared) imports internal/recipe (stage)"},
		{"release imports the command", with(func(p map[string]*pkg) { p["internal/release"].imports = imp(m+"/cmd/helperbuild", "x.go") }),
			"internal/release (wiring) imports cmd/helperbuild (command)"},
		{"a fixture outside tests", with(func(p map[string]*pkg) {
			p["internal/publish"].imports = imp(m+"/internal/fixture/testkit", "upload.go")
		}),
			"internal/publish (stage) imports internal/fixture/testkit (fixture) in upload.go"},
		{"the command imports a fixture", with(func(p map[string]*pkg) { p["cmd/helperbuild"].imports = imp(m+"/internal/fixture/testkit", "run.go") }),
			"cmd/helperbuild (command) imports internal/fixture/testkit (fixture)"},
		{"a stage's test imports a stage", with(func(p map[string]*pkg) { p["internal/layer"].testImports = imp(m+"/internal/manifest", "x_test.go") }),
			"internal/layer (stage) imports internal/manifest (stage) in x_test.go"},
		{"cobra below the command", with(func(p map[string]*pkg) { p["internal/release"].imports = imp("github.com/spf13/cobra", "x.go") }),
			"internal/release (wiring) imports github.com/spf13/cobra in x.go: only the command may"},
		{"environment read below the command", with(func(p map[string]*pkg) { p["internal/crossbuild"].envReads = []string{"build.go:9: os.Environ"} }),
			"internal/crossbuild reads the environment at build.go:9: os.Environ"},
		{"the command imports a stage", with(func(p map[string]*pkg) { p["cmd/helperbuild"].imports = imp(m+"/internal/publish", "x.go") }),
			"cmd/helperbuild (command) imports internal/publish in x.go: the command imports only internal/release"},
		{"the command grows", with(func(p map[string]*pkg) { p["cmd/helperbuild"].lines = maxCommandLines + 1 }),
			"cmd/helperbuild has 1801 lines outside its tests, more than 1800"},
		{"an io package imports a stage", with(func(p map[string]*pkg) { p["internal/registry"].imports = imp(m+"/internal/publish", "x.go") }),
			"internal/registry (io) imports internal/publish (stage)"},
		{"a shared package imports an io one", with(func(p map[string]*pkg) { p["internal/part"].imports = imp(m+"/internal/outfile", "x.go") }),
			"internal/part (shared) imports internal/outfile (io)"},
		{"a long function", with(func(p map[string]*pkg) {
			p["internal/layer"].longFuncs = []longFunc{{file: "write.go", name: "Write", line: 10, lines: maxFuncLines + 1}}
		}), "internal/layer/write.go:10: Write is 81 lines, more than 80"},
		{"the exception's name in another package", with(func(p map[string]*pkg) {
			p["internal/recipe"].longFuncs = []longFunc{{file: "apply.go", name: "dispatch", line: 1, lines: 93}}
		}), "internal/recipe/apply.go:1: dispatch is 93 lines"},
		{"a stage calls ggcr's remote", with(func(p map[string]*pkg) {
			p["internal/join"].httpCalls = []httpCall{{file: "source.go", line: 7, call: "remote.Get"}}
		}), "internal/join/source.go:7: remote.Get: only internal/registry talks HTTP to registries"},
		{"publish makes an HTTP client of its own", with(func(p map[string]*pkg) {
			p["internal/publish"].httpCalls = []httpCall{{file: "raw.go", line: 62, call: "http.Client{}"}}
		}), "internal/publish/raw.go:62: http.Client{}"},
		{"publish calls ggcr's remote itself", with(func(p map[string]*pkg) {
			p["internal/publish"].httpCalls = []httpCall{{file: "registry.go", line: 196, call: "remote.Head"}}
		}), "internal/publish/registry.go:196: remote.Head: only internal/registry talks HTTP to registries"},
		{"an exception is for its package only", with(func(p map[string]*pkg) {
			p["internal/release"].httpCalls = []httpCall{{file: "x.go", line: 1, call: "http.Client{}"}}
		}), "internal/release/x.go:1: http.Client{}"},
		{"a command sets up its own retries", with(func(p map[string]*pkg) {
			p["internal/release"].sessionCalls = []httpCall{{file: "index_request.go", line: 9, call: "registry.WithRetries"}}
		}), "internal/release/index_request.go:9: registry.WithRetries: only internal/release/session.go sets up a run"},
		{"registry options built outside the session", with(func(p map[string]*pkg) {
			p["internal/join"].sessionCalls = []httpCall{{file: "source.go", line: 3, call: "imageref.Options{}"}}
		}), "internal/join/source.go:3: imageref.Options{}"},
		{"a destination signed outside the session", with(func(p map[string]*pkg) {
			p["internal/release"].sessionCalls = []httpCall{{file: "merge_request.go", line: 5, call: ".SignWith"}}
		}), "internal/release/merge_request.go:5: .SignWith"},
		{"publish's exception is for its package only", with(func(p map[string]*pkg) {
			p["internal/release"].sessionCalls = []httpCall{{file: "verify_request.go", line: 1, call: "imageref.Options{}"}}
		}), "internal/release/verify_request.go:1: imageref.Options{}"},
		{"a package without a role", append(base(), pkg{path: "internal/newthing"}),
			"internal/newthing has no role: add it to roles"},
		{"a role without a package", slices.DeleteFunc(base(), func(p pkg) bool { return p.path == "internal/gitmeta" }),
			"rules_test.go gives internal/gitmeta a role, but there is no such package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(m, tt.pkgs)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "%q", got)
			assert.Contains(t, got[0], tt.want)
		})
	}
	// Allowed edges pass: a stage's test on a fixture, release on a stage,
	// the command on release and cobra, a suite on anything.
	ok := with(func(p map[string]*pkg) {
		p["internal/layer"].testImports = imp(m+"/internal/fixture/testkit", "x_test.go")
		p["internal/release"].imports = imp(m+"/internal/layer", "x.go")
		p["cmd/helperbuild"].imports = map[string][]string{m + "/internal/release": {"x.go"}, "github.com/spf13/cobra": {"x.go"}}
		p["cmd/helperbuild"].lines = maxCommandLines
		p["internal/publish"].imports = imp(m+"/internal/registry", "x.go")
		p["cmd/helperbuild"].envReads = []string{"main.go:1: os.Environ"}
		p["test/e2e"].imports = imp(m+"/internal/fixture/testkit", "x.go")
		p["internal/layer"].longFuncs = []longFunc{{file: "write.go", name: "Write", line: 10, lines: maxFuncLines}}
		p["internal/dockerfile"].longFuncs = []longFunc{{file: "apply.go", name: "dispatch", line: 101, lines: 93}}
		p["internal/registry"].httpCalls = []httpCall{{file: "raw.go", line: 1, call: "http.Client{}"}, {file: "read.go", line: 2, call: "remote.Get"}}
		p["internal/sign"].httpCalls = []httpCall{{file: "rekor.go", line: 28, call: "http.Client{}"}}
		p["test/faultproxy"].httpCalls = []httpCall{{file: "forward.go", line: 20, call: "http.NewRequestWithContext"}}
		p["internal/release"].sessionCalls = []httpCall{{file: "session.go", line: 1, call: "registry.WithRetries"}, {file: "session.go", line: 2, call: ".SignWith"}}
		p["internal/publish"].sessionCalls = []httpCall{{file: "registry.go", line: 3, call: "imageref.Options{}"}}
		p["internal/fixture/testkit"].sessionCalls = []httpCall{{file: "x.go", line: 1, call: "imageref.Options{}"}}
	})
	assert.Empty(t, check(m, ok))
}

// check returns one line per breach of the rules, sorted.
func check(module string, pkgs []pkg) []string {
	var problems []string
	found := map[string]bool{}
	for _, p := range pkgs {
		found[p.path] = true
		from, ok := roles[p.path]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no role: add it to roles in internal/depcheck/rules_test.go (shared, io, stage, source, wiring, command, fixture or suite)", p.path))
			continue
		}
		problems = append(problems, checkImports(module, p.path, from, p.imports, may)...)
		if from == command {
			problems = append(problems, checkCommand(module, p)...)
		}
		problems = append(problems, checkImports(module, p.path, from, p.testImports, mayInTest)...)
		problems = append(problems, checkFuncs(p)...)
		if from != fixture && from != suite && p.path != registryPackage {
			problems = append(problems, checkHTTP(p)...)
		}
		if from != fixture && from != suite {
			problems = append(problems, checkSession(p)...)
		}
		if where := apart(p.path, from); where != "" {
			problems = append(problems, where)
		}
		if from != command && from != suite {
			for _, r := range p.envReads {
				problems = append(problems, fmt.Sprintf("%s reads the environment at %s: only the command does; pass the value in", p.path, r))
			}
		}
	}
	for path := range roles {
		if !found[path] {
			problems = append(problems, fmt.Sprintf("internal/depcheck/rules_test.go gives %s a role, but there is no such package: remove the row", path))
		}
	}
	sort.Strings(problems)
	return problems
}

// fixtureDir is where the test-only packages live, apart from the
// product, so that ls internal lists only what ships.
const fixtureDir = "internal/fixture/"

// apart keeps test-only packages apart: a fixture lives under fixtureDir
// (depcheck itself, the rules' home, excepted) and nothing else does.
func apart(path string, r role) string {
	under := strings.HasPrefix(path, fixtureDir)
	switch {
	case r == fixture && !under && path != "internal/depcheck":
		return fmt.Sprintf("%s is test-only (fixture) but lives among the product's packages: move it under %s", path, fixtureDir)
	case r != fixture && under:
		return fmt.Sprintf("%s lives under %s but is %s: only test-only packages live there", path, fixtureDir, r)
	}
	return ""
}

// checkCommand holds the command thin: it imports only commandImports of
// the module, and has at most maxCommandLines lines outside its tests.
func checkCommand(module string, p pkg) []string {
	var problems []string
	for imp, files := range p.imports {
		rel, inModule := strings.CutPrefix(imp, module+"/")
		if to := roles[rel]; to == fixture || to == suite {
			continue // reported as test code
		}
		if inModule && !slices.Contains(commandImports, rel) {
			problems = append(problems, fmt.Sprintf("%s (command) imports %s in %s: the command imports only %s; ask release for it",
				p.path, rel, strings.Join(files, ", "), strings.Join(commandImports, ", ")))
		}
	}
	if p.lines > maxCommandLines {
		problems = append(problems, fmt.Sprintf("%s has %d lines outside its tests, more than %d: what is not flags, environment or printing belongs in release",
			p.path, p.lines, maxCommandLines))
	}
	return problems
}

func checkImports(module, path string, from role, imports map[string][]string, rule func(from, to role) (bool, string)) []string {
	var problems []string
	for imp, files := range imports {
		where := strings.Join(files, ", ")
		if slices.Contains(onlyCommand, imp) {
			if from != command && from != suite {
				problems = append(problems, fmt.Sprintf("%s (%s) imports %s in %s: only the command may", path, from, imp, where))
			}
			continue
		}
		rel, inModule := strings.CutPrefix(imp, module+"/")
		if !inModule {
			continue
		}
		to, known := roles[rel]
		if !known || rel == path {
			// A package without a role is reported as such; an external
			// test package imports its own package.
			continue
		}
		if ok, why := rule(from, to); !ok {
			problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s) in %s: %s", path, from, rel, to, where, why))
		}
	}
	return problems
}

// moduleRoot finds go.mod above this package and returns its directory and
// module path.
func moduleRoot(t *testing.T) (string, string) {
	t.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for range 10 {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod has no module line", dir)
		}
		dir = filepath.Dir(dir)
	}
	t.Fatal("no go.mod above the test's directory")
	return "", ""
}

// load parses the imports of every Go file of the module under root, in all
// build configurations at once (build tags are not evaluated, so a file for
// one OS counts too). Directories named testdata, hidden ones and other
// modules (a directory with its own go.mod) are skipped.
func load(root string) ([]pkg, error) {
	byDir := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		p := byDir[rel]
		if p == nil {
			p = &pkg{path: filepath.ToSlash(rel), imports: map[string][]string{}, testImports: map[string][]string{}}
			byDir[rel] = p
		}
		return p.addFile(path)
	})
	if err != nil {
		return nil, err
	}
	var out []pkg
	for _, p := range byDir {
		out = append(out, *p)
	}
	return out, nil
}

// addFile records the imports of the file at path and, unless it is a test,
// its calls of the os functions that read the environment.
func (p *pkg) addFile(path string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	name := filepath.Base(path)
	test := strings.HasSuffix(name, "_test.go")
	if !test {
		p.lines += fset.File(f.Pos()).LineCount()
		p.addLongFuncs(fset, f, name)
		p.addHTTPCalls(fset, f, name)
		p.addSessionCalls(fset, f, name)
	}
	osName := ""
	for _, spec := range f.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return err
		}
		if test {
			p.testImports[imp] = append(p.testImports[imp], name)
		} else {
			p.imports[imp] = append(p.imports[imp], name)
		}
		if imp == "os" {
			osName = "os"
			if spec.Name != nil {
				osName = spec.Name.Name
			}
		}
	}
	if test || osName == "" {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == osName && slices.Contains(envReaders, sel.Sel.Name) {
			p.envReads = append(p.envReads, fmt.Sprintf("%s:%d: os.%s", name, fset.Position(sel.Pos()).Line, sel.Sel.Name))
		}
		return true
	})
	return nil
}

// TestMapNamesEveryPackage: the map in internal/doc.go names every
// internal package, so it cannot fall behind the tree.
func TestMapNamesEveryPackage(t *testing.T) {
	root, _ := moduleRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "internal", "doc.go"))
	require.NoError(t, err)
	words := strings.FieldsFunc(string(data), func(r rune) bool {
		return !(r == '/' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'))
	})
	for path := range roles {
		name, ok := strings.CutPrefix(path, "internal/")
		if !ok {
			continue
		}
		assert.Contains(t, words, name, "internal/doc.go's map names %s", path)
	}
}

// TestFixturesLiveApart checks the rule that keeps test-only packages out of
// the product's list, both ways.
func TestFixturesLiveApart(t *testing.T) {
	for _, c := range []struct {
		path string
		r    role
		want string
	}{
		{"internal/fixture/testkit", fixture, ""},
		{"internal/depcheck", fixture, ""},
		{"internal/publish", stage, ""},
		{"internal/testkit", fixture, "internal/testkit is test-only (fixture) but lives among the product's packages: move it under internal/fixture/"},
		{"internal/fixture/retry", boundary, "internal/fixture/retry lives under internal/fixture/ but is io: only test-only packages live there"},
	} {
		assert.Equal(t, c.want, apart(c.path, c.r), c.path)
	}
	for path, r := range roles {
		assert.Empty(t, apart(path, r), "the table itself")
	}
}
