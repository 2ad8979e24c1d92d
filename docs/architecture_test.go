package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// architecturePage is the map a newcomer reads; these tests hold it to the
// code: every package is on it, and every package, exported name and file
// it mentions exists.
const architecturePage = "docs/architecture.md"

// goPackage is one package of the module as the page may name it: by its
// path below internal/ ("release", "fixture/testkit") or in full
// ("cmd/helperbuild").
type goPackage struct {
	rel   string          // path from the repository root
	name  string          // the package clause's name
	names map[string]bool // exported names: "Run", "Report.WriteSummary"
}

// modulePackages parses every package under internal/, cmd/ and test/
// (non-test files; internal/doc.go, the map in brief, is no package of its
// own) and records its exported declarations.
func modulePackages(t *testing.T, root string) map[string]*goPackage {
	t.Helper()
	out := map[string]*goPackage{}
	for _, top := range []string{"internal", "cmd", "test"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join(root, "internal") {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			p := out[rel]
			if p == nil {
				p = &goPackage{rel: filepath.ToSlash(rel), name: f.Name.Name, names: map[string]bool{}}
				out[rel] = p
			}
			addDecls(p.names, f)
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// addDecls records f's exported top-level names, methods as Type.Method
// and struct fields and interface methods as Type.Field.
func addDecls(names map[string]bool, f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				names[d.Name.Name] = true
				continue
			}
			if recv := receiverName(d.Recv.List[0].Type); recv != "" {
				names[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
					addMembers(names, s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
}

func addMembers(names map[string]bool, typ string, expr ast.Expr) {
	var fields *ast.FieldList
	switch t := expr.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			names[typ+"."+n.Name] = true
		}
		if len(f.Names) == 0 { // embedded: its name is the field's
			if n := receiverName(f.Type); n != "" {
				names[typ+"."+n] = true
			}
		}
	}
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.IndexListExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// pageName is how the page names a package: below internal/ without the
// prefix, anything else in full.
func pageName(rel string) string {
	if n, ok := strings.CutPrefix(rel, "internal/"); ok {
		return n
	}
	return rel
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// qualified is pkg.Name or pkg.Type.Member, as Go code spells it.
	qualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z]\w*(?:\.[A-Z]\w*)?)(?:\(.*\))?$`)
	// member is Type.Member of any package.
	member = regexp.MustCompile(`^([A-Z]\w*)\.([A-Z]\w*)(?:\(.*\))?$`)
	// repoPath is a file or folder of the repository named in the text.
	repoPath = regexp.MustCompile(`\b((?:internal|cmd|docs|scripts|test)/[A-Za-z0-9_./-]*[A-Za-z0-9_])`)
)

// architectureProblems returns, sorted, what page says that the code does
// not bear out.
func architectureProblems(root, page string, pkgs map[string]*goPackage) []string {
	var problems []string
	byPageName := map[string]*goPackage{}
	byName := map[string][]*goPackage{}
	for _, p := range pkgs {
		byPageName[pageName(p.rel)] = p
		byName[p.name] = append(byName[p.name], p)
	}
	spans := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(page, -1) {
		spans[m[1]] = true
	}
	for _, p := range pkgs {
		if !spans[pageName(p.rel)] {
			problems = append(problems, "package "+p.rel+" is not on the map: give it a row (`"+pageName(p.rel)+"`) in its floor's table")
		}
	}
	for span := range spans {
		if m := qualified.FindStringSubmatch(span); m != nil {
			cands := byName[m[1]]
			if len(cands) == 0 {
				continue // a library's name (v1.Platform, errgroup.Group): not ours to check
			}
			found := false
			for _, p := range cands {
				found = found || p.names[m[2]]
			}
			if !found {
				problems = append(problems, "`"+span+"`: package "+m[1]+" declares no "+m[2])
			}
			continue
		}
		if m := member.FindStringSubmatch(span); m != nil {
			found := false
			for _, p := range pkgs {
				found = found || p.names[m[1]+"."+m[2]]
			}
			if !found {
				problems = append(problems, "`"+span+"`: no package declares "+m[1]+"."+m[2])
			}
		}
	}
	for _, m := range repoPath.FindAllStringSubmatch(page, -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			problems = append(problems, m[1]+" is named but does not exist")
		}
	}
	sort.Strings(problems)
	return slicesCompact(problems)
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func TestArchitectureMatchesTheCode(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, architecturePage))
	require.NoError(t, err)
	assert.Empty(t, architectureProblems(root, string(page), modulePackages(t, root)))
}

// TestArchitectureCheckCatchesDrift mutates the page and the code's
// packages the ways they drift apart, and wants each caught.
func TestArchitectureCheckCatchesDrift(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, architecturePage))
	require.NoError(t, err)
	page := string(data)
	pkgs := modulePackages(t, root)
	require.Empty(t, architectureProblems(root, page, pkgs), "the page as it is")

	withPackage := map[string]*goPackage{"internal/newthing": {rel: "internal/newthing", name: "newthing", names: map[string]bool{}}}
	for k, v := range pkgs {
		withPackage[k] = v
	}
	assert.Contains(t, architectureProblems(root, page, withPackage),
		"package internal/newthing is not on the map: give it a row (`newthing`) in its floor's table")
	assert.Contains(t, architectureProblems(root, page+"\n`release.NoSuchThing`\n", pkgs),
		"`release.NoSuchThing`: package release declares no NoSuchThing")
	assert.Contains(t, architectureProblems(root, page+"\n`Report.NoSuchMethod`\n", pkgs),
		"`Report.NoSuchMethod`: no package declares Report.NoSuchMethod")
	assert.Contains(t, architectureProblems(root, page+"\nsee internal/release/nosuchfile.go\n", pkgs),
		"internal/release/nosuchfile.go is named but does not exist")
}
