package scaffold

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"sync"
	"text/template"
)

// Platforms are the five platforms GitLab publishes both its helper and
// its runner images for.
var Platforms = []string{"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"}

// templates of the link-time values of VersionVars: GitLab Runner's
// VERSION has no leading v (17.10.0), its helper tags do (x86_64-v17.10.0).
var varTemplates = map[string]string{
	"VERSION":  `{{.Version | trimPrefix "v"}}`,
	"REVISION": `{{.Revision}}`,
	"BRANCH":   `{{.Branch}}`,
	"BUILT":    `{{.Date}}`,
}

// Recipe is the helperbuild.yaml for r with base as every image's
// BASE_IMAGE. It fails when r has neither a helper nor a runner.
func Recipe(r *Repo, base string) ([]byte, error) {
	if r.Helper == "" && r.Runner == "" {
		found := "no main package"
		if len(r.Others) > 0 {
			found = "main packages " + strings.Join(r.Others, ", ")
		}
		return nil, fmt.Errorf("found %s, none named %s or %s: init writes recipes for GitLab Runner's images; for another program use config-free mode, e.g. helperbuild push --base REF --tag REGISTRY/GROUP/NAME:TAG ./cmd/NAME",
			found, HelperName, RunnerName)
	}
	var ldflags []string
	for _, v := range r.Vars {
		ldflags = append(ldflags, fmt.Sprintf("-X %s.%s=%s", r.VersionPackage, v, varTemplates[v]))
	}
	var buf bytes.Buffer
	err := recipeTemplate().Execute(&buf, map[string]any{
		"Repo": r, "Base": base, "BaseYAML": baseYAML(base), "Platforms": strings.Join(Platforms, ", "), "Ldflags": ldflags,
		"Others": others(r.Others), "Helper": HelperName, "Runner": RunnerName, "PackagingDir": PackagingDir,
	})
	return buf.Bytes(), err
}

// others lists the main packages the recipe leaves out, at most five by
// name.
func others(mains []string) string {
	const shown = 5
	if len(mains) <= shown {
		return strings.Join(mains, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(mains[:shown], ", "), len(mains)-shown)
}

// baseYAML is base as a YAML scalar: scratch as is, a reference quoted.
func baseYAML(base string) string {
	if base == "scratch" {
		return base
	}
	return fmt.Sprintf("%q", base)
}

// recipeTemplate and ciTemplate are parsed on first use: only init
// renders them, and every other command would pay their parsing at start.
var recipeTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("recipe").Parse(`# helperbuild recipe for {{.Repo.Module}}, written by helperbuild init.
# Build it with: helperbuild build (an OCI layout in out/oci), publish it with:
# helperbuild push --repo REGISTRY/GROUP (CI_REGISTRY_IMAGE in GitLab CI).
{{- if eq .Base "scratch"}}
# BASE_IMAGE is scratch: the images hold only the binaries, which builds at
# once with no registry but cannot run jobs. Point BASE_IMAGE at a multi-arch
# base that has bash, git, git-lfs, dumb-init, /entrypoint and a CA bundle
# (GitLab's runner base images: see helperbuild's examples/gitlab-runner/README.md).
{{- end}}
platforms: [{{.Platforms}}]

# GitLab Runner's VERSION has no "v" (17.10.0); runners compute helper tags as
# <arch>-v<VERSION> (x86_64-v17.10.0), which platform_tags publish.
build:
  flags: [-trimpath]
  ldflags: >-
    -s -w
{{- range .Ldflags}}
    {{.}}
{{- end}}
{{- if not .Ldflags}}
# No package declares VERSION, REVISION, BRANCH or BUILT; set yours with
# -X <import path>.<variable>={{"{{.Version}}"}} above.
{{- end}}

binaries:
{{- if .Repo.Helper}}
  - main: {{.Repo.Helper}}
    output: {{.Helper}}.{{"{{.OS}}-{{.Arch}}"}}
{{- end}}
{{- if .Repo.Runner}}
  - main: {{.Repo.Runner}}
    output: {{.Runner}}-{{"{{.OS}}-{{.Arch}}"}}
{{- end}}
{{- if .Others}}
# Not built (other main packages): {{.Others}}
{{- end}}

# No dockerfile: helperbuild's built-in ones, the same form as GitLab Runner's
# dockerfiles/runner-helper and dockerfiles/runner.
images:
{{- if .Repo.Helper}}
  - name: {{.Helper}}
    args: {BASE_IMAGE: {{.BaseYAML}}}
    contexts: {binary_dir: "binaries:"}
    tags: ["{{"{{.Version}}"}}"]
    platform_tags: ['{{"{{.GitLabArch}}-v{{.Version | trimPrefix \"v\"}}"}}']
    # Enable once BASE_IMAGE has what the helper needs, so build and push check it:
    # contract: helper
{{- end}}
{{- if and .Repo.Runner .Repo.Packaging}}
  - name: {{.Runner}}
    args: {BASE_IMAGE: {{.BaseYAML}}}
    contexts:
      binary_dir: "binaries:"
      packaging_dir: {{.PackagingDir}}
    tags: ["{{"{{.Version}}"}}", latest]
    # Enable once BASE_IMAGE has what the Helm chart runs, so build and push check it:
    # contract: runner
{{- else if .Repo.Runner}}
# The runner's image copies clear-docker-cache from {{.PackagingDir}},
# which this repository lacks; add an image named {{.Runner}} once it has it.
{{- end}}
`))
})

// CI is the GitLab CI fragment that releases r's recipe on every tag
// through helperbuild's template (one job per platform, one merge), as
// included from project at ref, with refComment (TemplateRef's) above it.
// The jobs are named after the module (gitlab-runner-build,
// gitlab-runner-release).
func CI(r *Repo, project, ref, refComment string) []byte {
	var buf bytes.Buffer
	_ = ciTemplate().Execute(&buf, map[string]any{"Project": project, "Ref": ref, "RefComment": refComment, "Name": jobName(r.Module), "Command": CommandPackage,
		"Platforms": strings.Join(Platforms, ", "), "Repository": TemplateRepository})
	return buf.Bytes()
}

// CommandPackage is helperbuild's main package, what go install installs.
const CommandPackage = "github.com/helperbuild/helperbuild/cmd/helperbuild"

// TemplateRepository is helperbuild's repository, which the project the
// fragment includes the template from mirrors.
const TemplateRepository = "https://github.com/helperbuild/helperbuild"

// jobName is the last element of module as the template's name input
// takes it ([a-z0-9][a-z0-9-]*); "release" when nothing of it is left.
func jobName(module string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(path.Base(module)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0:
			b.WriteByte('-')
		}
	}
	if n := strings.TrimRight(b.String(), "-"); n != "" {
		return n
	}
	return "release"
}

var ciTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("ci").Parse(`# Release the images of helperbuild.yaml on every tag, written by helperbuild
# init: one job per platform pushes its images by digest, one merge job tags
# the multi-arch indexes and leaves release.env (GITLAB_RUNNER_HELPER_IMAGE,
# ...) for later jobs. Images go to CI_REGISTRY_IMAGE/<image name>.
include:
  # The project {{.Project}} must exist on this GitLab, holding ref: a mirror of
  # {{.Repository}} (docs/gitlab-ci.md, "Including the template").
  - project: {{.Project}}
    # {{.RefComment}}
    ref: {{.Ref}}
    file: ci/gitlab/release.gitlab-ci.yml
    inputs:
      name: {{.Name}}
      platforms: [{{.Platforms}}]
      # the helperbuild the jobs install (go install {{.Command}}@VERSION): the one at ref
      helperbuild-version: {{.Ref}}
    rules:
      - if: $CI_COMMIT_TAG
`))
})
