package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// PartPaths expands merge's arguments into part file paths: a file as
// is, a glob to what it matches, a directory to the *.json files in it
// (a directory of GitLab artifacts); each file once, in order. It fails on
// an argument that gives no file (every error is the user's input).
func PartPaths(args []string) ([]string, error) {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, a := range args {
		if fi, err := os.Stat(a); err == nil {
			if !fi.IsDir() {
				add(a)
				continue
			}
			matches, _ := filepath.Glob(filepath.Join(globEscape(a), "*.json"))
			if len(matches) == 0 {
				return nil, fmt.Errorf("part directory %s has no *.json files: did the jobs' artifacts reach this job (needs: / dependencies:)?", a)
			}
			for _, m := range matches {
				add(m)
			}
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("part %q: %v", a, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("part %s: no such file, and no file matches it as a pattern", a)
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
				add(m)
			}
		}
	}
	return out, nil
}

// globEscape escapes the glob metacharacters of a literal path.
func globEscape(p string) string {
	out := make([]rune, 0, len(p))
	for _, r := range p {
		if r == '*' || r == '?' || r == '[' || r == '\\' {
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}
