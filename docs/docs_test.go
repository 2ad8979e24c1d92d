// Package docs holds the project's documentation; its tests keep the
// documentation honest: links resolve, and every shell block is either run by
// scripts/docs-check.sh or marked as illustrative.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkedByDocsCheck lists the documents whose command blocks
// scripts/docs-check.sh runs (make docs-check, part of make test).
var checkedByDocsCheck = []string{"docs/operators.md"}

// commandLanguages are the fence languages that hold commands to type.
var commandLanguages = []string{"sh", "console", "shell", "bash"}

// documents returns README.md, every Markdown file under docs/ and the
// READMEs of test/ and examples/, relative to the repository root.
func documents(t *testing.T, root string) []string {
	t.Helper()
	out := []string{"README.md"}
	for _, dir := range []string{"docs", "test", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				rel, _ := filepath.Rel(root, path)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation other than
// '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// block is one fenced code block of a document.
type block struct {
	line int      // the opening fence's line
	info []string // the words after the fence
	text []string
}

// scan returns a document's headings' anchors, its links (outside code
// blocks) with their lines, and its fenced blocks.
func scan(t *testing.T, path string) (anchors map[string]bool, links map[int][]string, blocks []block) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	anchors, links = map[string]bool{}, map[int][]string{}
	var cur *block
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if cur == nil {
				cur = &block{line: n, info: strings.Fields(strings.TrimPrefix(line, "```"))}
			} else {
				blocks = append(blocks, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.text = append(cur.text, line)
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			anchors[slug(strings.ReplaceAll(m[1], "`", ""))] = true
		}
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			links[n] = append(links[n], m[1])
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a code block opened at line %d is never closed", path, func() int {
		if cur != nil {
			return cur.line
		}
		return 0
	}())
	return anchors, links, blocks
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the tests run from docs/, one level below the repository root")
	return root
}

// TestRelativeLinksResolve follows every relative link of every document to
// a file that exists and, for a #fragment into Markdown, to a heading.
func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, doc := range documents(t, root) {
		_, links, _ := scan(t, filepath.Join(root, doc))
		for line, targets := range links {
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := filepath.Join(root, filepath.Dir(doc), file)
				if file == "" {
					dest = filepath.Join(root, doc)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: no such file", doc, line, target)
					continue
				}
				if frag != "" && strings.HasSuffix(dest, ".md") {
					anchors, _, _ := scan(t, dest)
					if !anchors[frag] {
						t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", doc, line, target, frag, file)
					}
				}
			}
		}
	}
}

// docMentionRE finds a repository document named in prose or code
// comments, such as "docs/gitlab-image-contract.md".
var docMentionRE = regexp.MustCompile(`\bdocs/[A-Za-z0-9._-]+\.md\b`)

// TestMentionedDocumentsExist reads every text file of the repository for
// a docs/ path ending in .md and checks that the document exists.
func TestMentionedDocumentsExist(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || d.Name() == "out" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh", ".yml", ".yaml", "":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range slices.Compact(docMentionRE.FindAllString(string(data), -1)) {
			if _, err := os.Stat(filepath.Join(root, m)); err != nil {
				t.Errorf("%s names %s, which does not exist", rel, m)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// TestCommandBlocksAreRunOrIllustrative: every fenced block says what it
// holds (a language word after the fence); a block of commands is in a
// document scripts/docs-check.sh runs, names the script that runs it
// (```sh run-by:scripts/fresh-check.sh), or says "illustrative" after its
// language (```sh illustrative), so a reader knows which commands were
// proved to work as shown.
func TestCommandBlocksAreRunOrIllustrative(t *testing.T) {
	root := repoRoot(t)
	for _, doc := range documents(t, root) {
		_, _, blocks := scan(t, filepath.Join(root, doc))
		for _, b := range blocks {
			if len(b.info) == 0 {
				t.Errorf("%s:%d: a code block without a language; write ```sh (commands), ```text (output) or the format it holds", doc, b.line)
				continue
			}
			if !slices.Contains(commandLanguages, b.info[0]) {
				continue
			}
			if slices.Contains(checkedByDocsCheck, doc) || slices.Contains(b.info[1:], "illustrative") {
				continue
			}
			if runner, ok := runBy(b.info[1:]); ok {
				if _, err := os.Stat(filepath.Join(root, runner)); err != nil {
					t.Errorf("%s:%d: run-by:%s: no such script", doc, b.line, runner)
				}
				continue
			}
			t.Errorf("%s:%d: commands that nothing runs; run them in scripts/docs-check.sh, name the script that runs them (```%s run-by:PATH) or mark the block ```%s illustrative", doc, b.line, b.info[0], b.info[0])
		}
	}
}

// runBy returns the script a block's "run-by:PATH" word names.
func runBy(words []string) (string, bool) {
	for _, w := range words {
		if p, ok := strings.CutPrefix(w, "run-by:"); ok && p != "" {
			return p, true
		}
	}
	return "", false
}

// The checks above must be able to fail.
func TestChecksCatchBreakage(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "x.md")
	require.NoError(t, os.WriteFile(doc, []byte("# A `b` c\n\n[x](y.md) [z](#a-b-c)\n\n```\nplain\n```\n\n```sh\nrm -rf /\n```\n"), 0o644))
	anchors, links, blocks := scan(t, doc)
	assert.True(t, anchors["a-b-c"])
	assert.Equal(t, map[int][]string{3: {"y.md", "#a-b-c"}}, links)
	require.Len(t, blocks, 2)
	assert.Empty(t, blocks[0].info)
	assert.Equal(t, []string{"sh"}, blocks[1].info)
	assert.Equal(t, "whats-new-in-v2", slug("What's new in v2?"))
}
