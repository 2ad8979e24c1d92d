package scaffold

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// TemplateStages are the stages the release template's jobs run in with
// their default inputs: NAME-build in build, NAME-release in deploy.
var TemplateStages = []string{"build", "deploy"}

// gitlabDefaultStages are GitLab's stages when a .gitlab-ci.yml names none.
var gitlabDefaultStages = []string{".pre", "build", "test", "deploy", ".post"}

// IgnoreOutput makes dir's .gitignore ignore out/, where build writes its
// layout: it creates the file, or appends the line to it, unless a line
// already ignores out (out, out/, /out, /out/). It reports whether it
// changed the file.
func IgnoreOutput(dir string) (bool, error) {
	p := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case "out", "out/", "/out", "/out/":
			return false, nil
		}
	}
	add := "/out/\n"
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		add = "\n" + add
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

// MissingStages are the stages of need that the pipeline file ci
// (.gitlab-ci.yml) does not declare, in need's order: GitLab refuses a
// pipeline whose job names a stage its stages: list lacks. Without a
// stages: list GitLab's defaults apply (.pre, build, test, deploy, .post).
func MissingStages(ci []byte, need []string) ([]string, error) {
	var doc struct {
		Stages []string `yaml:"stages"`
	}
	if err := yaml.Unmarshal(ci, &doc); err != nil {
		return nil, fmt.Errorf("read its stages: %w", err)
	}
	have := doc.Stages
	if have == nil {
		have = gitlabDefaultStages
	}
	var missing []string
	for _, s := range need {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	return missing, nil
}
