package scaffold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"sort"

	"github.com/helperbuild/helperbuild/internal/execerr"
)

// Image names with a built-in Dockerfile, and what their binaries are
// called in it.
const (
	HelperName = "gitlab-runner-helper"
	RunnerName = "gitlab-runner"
)

// PackagingDir is where GitLab Runner keeps what the runner image copies
// next to its binary (clear-docker-cache), relative to the module root.
const PackagingDir = "packaging/root/usr/share/gitlab-runner"

// VersionVars are GitLab Runner's link-time variables, in the order the
// recipe sets them.
var VersionVars = []string{"VERSION", "REVISION", "BRANCH", "BUILT"}

// Repo is what Inspect found in a Go module.
type Repo struct {
	// Module is the module path, e.g. gitlab.com/gitlab-org/gitlab-runner.
	Module string
	// Helper and Runner are the main packages of the helper and the runner,
	// relative to the module root ("./apps/gitlab-runner-helper", "."); ""
	// when there is none.
	Helper, Runner string
	// Others are the other main packages, relative ("./cmd/tool").
	Others []string
	// VersionPackage is the import path of the package declaring
	// VersionVars; Vars the ones it declares, in VersionVars order.
	VersionPackage string
	Vars           []string
	// Packaging says PackagingDir exists (the runner image needs it).
	Packaging bool
}

// goPackage is what Inspect reads of `go list -json`.
type goPackage struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Module     *struct{ Path, Dir string }
}

// Inspect runs goCmd list in dir (a module root) with env and reports the
// module's main packages and version variables.
func Inspect(ctx context.Context, dir, goCmd string, env []string) (*Repo, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.CommandContext(ctx, goCmd, "list", "-e", "-json=ImportPath,Name,Dir,GoFiles,Module", "./...")
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, execerr.New("go list ./... in "+dir, err, stderr.Bytes())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(&stdout)
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list ./... in %s: %w", dir, err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		return nil, fmt.Errorf("%s holds no Go package of a module: run helperbuild init at the root of a Go module (where go.mod is)", dir)
	}
	r := &Repo{Module: pkgs[0].Module.Path}
	root := pkgs[0].Module.Dir
	for _, p := range pkgs {
		if p.Name != "main" {
			continue
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			return nil, err
		}
		main := "./" + filepath.ToSlash(rel)
		if rel == "." {
			main = "."
		}
		switch {
		case r.Helper == "" && path.Base(p.ImportPath) == HelperName:
			r.Helper = main
		case r.Runner == "" && path.Base(p.ImportPath) == RunnerName:
			r.Runner = main
		default:
			r.Others = append(r.Others, main)
		}
	}
	r.VersionPackage, r.Vars = versionPackage(pkgs)
	r.Packaging = isDir(filepath.Join(root, filepath.FromSlash(PackagingDir)))
	return r, nil
}

// versionPackage is the package declaring most of VersionVars as
// package-level variables: one named common first, then the first by
// import path.
func versionPackage(pkgs []goPackage) (string, []string) {
	sorted := append([]goPackage(nil), pkgs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		ci, cj := sorted[i].Name == "common", sorted[j].Name == "common"
		if ci != cj {
			return ci
		}
		return sorted[i].ImportPath < sorted[j].ImportPath
	})
	best, bestVars := "", []string(nil)
	for _, p := range sorted {
		if p.Name == "main" {
			continue // -X on a main package sets only that binary's copy
		}
		vars := declaredVars(p)
		if len(vars) > len(bestVars) {
			best, bestVars = p.ImportPath, vars
		}
	}
	return best, bestVars
}

// declaredVars are the VersionVars p declares at package level, in
// VersionVars order.
func declaredVars(p goPackage) []string {
	found := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			continue // go build reports it
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					found[n.Name] = true
				}
			}
		}
	}
	var out []string
	for _, v := range VersionVars {
		if found[v] {
			out = append(out, v)
		}
	}
	return out
}
