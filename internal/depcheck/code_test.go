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
// and who may talk HTTP to registries.

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
	local := map[string]string{} // import name -> the short name registryIO is keyed by
	for _, spec := range f.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		if _, ok := registryIO[imp]; !ok {
			continue
		}
		n := imp[strings.LastIndex(imp, "/")+1:]
		if spec.Name != nil {
			local[spec.Name.Name] = imp
		} else {
			local[n] = imp
		}
	}
	if len(local) == 0 {
		return
	}
	record := func(sel *ast.SelectorExpr, suffix string) {
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return
		}
		imp, ok := local[x.Name]
		if !ok || !slices.Contains(registryIO[imp], sel.Sel.Name+suffix) {
			return
		}
		short := imp[strings.LastIndex(imp, "/")+1:]
		p.httpCalls = append(p.httpCalls, httpCall{file: name, line: fset.Position(sel.Pos()).Line, call: short + "." + sel.Sel.Name + suffix})
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
