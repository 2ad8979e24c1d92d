package depcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// The rules about code rather than imports: how long a function may be,
// who may talk HTTP to registries, and who sets up a run.

// longFunc is a function declaration longer than maxFuncLines.
type longFunc struct {
	file, name  string // "apply.go", "dispatch" (methods too: "Run")
	line, lines int
}

// checkHTTP reports p's calls that reach registries over HTTP, except
// those registryIOExceptions allows p: only internal/registry does that.
func checkHTTP(p pkg) []string {
	var problems []string
	for _, c := range p.httpCalls {
		if slices.Contains(registryIOExceptions[p.path], c.call) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s/%s:%d: %s: only %s talks HTTP to registries (on its retry transport); ask it",
			p.path, c.file, c.line, c.call, registryPackage))
	}
	return problems
}

// checkFuncs reports the functions of p over maxFuncLines, except the
// ones longFuncExceptions names.
func checkFuncs(p pkg) []string {
	var problems []string
	for _, f := range p.longFuncs {
		where := p.path + "/" + f.file
		if f.lines <= maxFuncLines || slices.Contains(longFuncExceptions, where+" "+f.name) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s is %d lines, more than %d: split it along a seam (a step, a loop body, a case)",
			where, f.line, f.name, f.lines, maxFuncLines))
	}
	return problems
}

// addHTTPCalls records f's uses of the registryIO functions (the file
// name), whatever name their package is imported under; net/http's Client
// counts where a composite literal makes one.
func (p *pkg) addHTTPCalls(fset *token.FileSet, f *ast.File, name string) {
	p.httpCalls = append(p.httpCalls, usesOf(fset, f, name, registryIO, nil)...)
}

// addSessionCalls records f's uses of what only a run's session builds
// (sessionParts, sessionMethods).
func (p *pkg) addSessionCalls(fset *token.FileSet, f *ast.File, name string) {
	p.sessionCalls = append(p.sessionCalls, usesOf(fset, f, name, sessionParts, sessionMethods)...)
}

// usesOf lists f's uses (the file name) of table's functions, whatever
// name their package is imported under ("remote.Get"; a composite literal
// of a type as "pkg.Type{}"), and of the methods named methods on any
// value (".SignWith").
func usesOf(fset *token.FileSet, f *ast.File, name string, table map[string][]string, methods []string) []httpCall {
	local := map[string]string{} // import name -> the import path table is keyed by
	for _, spec := range f.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		if _, ok := table[imp]; !ok {
			continue
		}
		n := imp[strings.LastIndex(imp, "/")+1:]
		if spec.Name != nil {
			local[spec.Name.Name] = imp
		} else {
			local[n] = imp
		}
	}
	var out []httpCall
	record := func(sel *ast.SelectorExpr, suffix string) {
		x, ok := sel.X.(*ast.Ident)
		if imp, imported := local[identName(x, ok)]; ok && imported {
			if slices.Contains(table[imp], sel.Sel.Name+suffix) {
				short := imp[strings.LastIndex(imp, "/")+1:]
				out = append(out, httpCall{file: name, line: fset.Position(sel.Pos()).Line, call: short + "." + sel.Sel.Name + suffix})
			}
			return
		}
		if suffix == "" && slices.Contains(methods, sel.Sel.Name) {
			out = append(out, httpCall{file: name, line: fset.Position(sel.Pos()).Line, call: "." + sel.Sel.Name})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok {
				record(sel, "{}")
			}
		case *ast.SelectorExpr:
			record(n, "")
		}
		return true
	})
	return out
}

func identName(x *ast.Ident, ok bool) string {
	if !ok {
		return ""
	}
	return x.Name
}

// checkSession reports p's uses of what only a run's session builds,
// outside sessionFile and sessionExceptions.
func checkSession(p pkg) []string {
	var problems []string
	for _, c := range p.sessionCalls {
		if p.path+"/"+c.file == sessionFile || slices.Contains(sessionExceptions[p.path], c.call) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s/%s:%d: %s: only %s sets up a run (temp dir, registry options, retries and their report, signing of a registry destination); open a session there",
			p.path, c.file, c.line, c.call, sessionFile))
	}
	return problems
}

// addLongFuncs records the function declarations of f (the file name)
// longer than maxFuncLines, from the func keyword to the closing brace.
func (p *pkg) addLongFuncs(fset *token.FileSet, f *ast.File, name string) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := end - start + 1; n > maxFuncLines {
			p.longFuncs = append(p.longFuncs, longFunc{file: name, name: fd.Name.Name, line: start, lines: n})
		}
	}
}
