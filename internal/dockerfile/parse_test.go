package dockerfile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRefused(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"RUN", "FROM alpine\n\nRUN apk add git\n",
			testName + ":3: RUN needs a container runtime; bake this step into the base image"},
		{"RUN exec form", "FROM alpine\nRUN [\"true\"]\n", testName + ":2: RUN needs a container runtime"},
		{"RUN lower case with continuation", "FROM alpine\nCOPY a /a\nrun echo \\\n  hi\n", testName + ":3: RUN needs a container runtime"},
		{"ONBUILD", "FROM alpine\nONBUILD COPY . /app\n", testName + ":2: ONBUILD is not supported"},
		{"second FROM", "FROM golang AS build\nCOPY . /src\nFROM alpine\n",
			testName + ":3: multi-stage builds are not supported; build the earlier stage's output outside"},
		{"ADD URL", "FROM alpine\nADD https://example.com/x.tar.gz /x\n",
			testName + ":2: ADD https://example.com/x.tar.gz: ADD of a URL needs the network at build time; download it into a context directory and COPY it"},
		{"ADD http URL", "FROM alpine\nADD http://example.com/x /x\n", testName + ":2: ADD http://example.com/x: ADD of a URL"},
		{"ADD git", "FROM alpine\nADD git@github.com:moby/buildkit.git /src\n", testName + ":2: ADD git@github.com:moby/buildkit.git: ADD of a git repository"},
		{"ADD git scheme", "FROM alpine\nADD git://example.com/r.git /src\n", testName + ":2: ADD git://example.com/r.git: ADD of a git repository"},
		{"ADD checksum", "FROM alpine\nADD --checksum=sha256:abc x /x\n", testName + ":2: ADD --checksum and --keep-git-dir apply to URL and git sources"},
		{"ADD keep-git-dir", "FROM alpine\nADD --keep-git-dir x /x\n", testName + ":2: ADD --checksum and --keep-git-dir"},
		{"ADD exclude", "FROM alpine\nADD --exclude=*.md . /x\n", testName + ":2: ADD --exclude is not supported"},
		{"COPY from stage index", "FROM alpine\nCOPY --from=0 /a /a\n",
			testName + ":2: COPY --from=0 refers to a build stage; multi-stage builds are not supported, use --from=<named context>"},
		{"COPY from own stage name", "FROM alpine AS base\nCOPY --from=BASE /a /a\n", testName + ":2: COPY --from=BASE refers to a build stage"},
		{"COPY from variable", "FROM alpine\nARG CTX\nCOPY --from=$CTX a /a\n", testName + ":3: COPY --from=$CTX: variable expansion is not supported for --from"},
		{"COPY parents", "FROM alpine\nCOPY --parents a/b /x/\n", testName + ":2: COPY --parents is not supported"},
		{"COPY exclude", "FROM alpine\nCOPY --exclude=*.md . /x\n", testName + ":2: COPY --exclude is not supported"},
		{"COPY heredoc", "FROM alpine\nCOPY <<EOF /etc/motd\nhello\nEOF\nENV A=b\n",
			testName + ":2: COPY with a heredoc is not supported; put the content in a file"},
		{"ADD heredoc", "FROM alpine\nADD <<EOF /etc/motd\nhello\nEOF\n", testName + ":2: ADD with a heredoc is not supported"},
		{"COPY chown name", "FROM alpine\nCOPY --chown=gitlab-runner a /a\n",
			testName + ":2: COPY --chown=gitlab-runner: user and group names (\"gitlab-runner\") need the base image's /etc/passwd"},
		{"COPY chown group name", "FROM alpine\nCOPY --chown=1000:staff a /a\n", testName + `:2: COPY --chown=1000:staff: user and group names ("staff")`},
		{"COPY chmod not octal", "FROM alpine\nCOPY --chmod=u+x a /a\n", testName + `:2: COPY --chmod=u+x: invalid chmod parameter "u+x"`},
		{"COPY chmod too big", "FROM alpine\nCOPY --chmod=17777 a /a\n", testName + `:2: COPY --chmod=17777: invalid chmod parameter`},
		{"HEALTHCHECK start-interval", "FROM alpine\nHEALTHCHECK --start-interval=1s CMD true\n", testName + ":2: HEALTHCHECK --start-interval cannot be stored"},
		{"STOPSIGNAL bad", "FROM alpine\nSTOPSIGNAL SIGNOPE\n", testName + ":2: STOPSIGNAL SIGNOPE: invalid signal"},
		{"STOPSIGNAL zero", "FROM alpine\nSTOPSIGNAL 0\n", testName + ":2: STOPSIGNAL 0: invalid signal number"},
		{"EXPOSE bad", "FROM alpine\nEXPOSE 80/foo\n", testName + ":2: EXPOSE 80/foo: invalid proto: foo"},
		{"EXPOSE out of range", "FROM alpine\nEXPOSE 70000\n", testName + ":2: EXPOSE 70000: invalid containerPort"},
		{"instruction before FROM", "ENV A=b\nFROM alpine\n", testName + ":1: ENV before FROM: only ARG may come before FROM"},
		{"no FROM", "ARG A\n", testName + ": no FROM instruction"},
		{"empty", "", testName + ": file with no instructions"},
		{"comments only", "# syntax=docker/dockerfile:1\n# hello\n", testName + ":2: file with no instructions"},
		{"unknown instruction", "FROM alpine\nCOPPY a /a\n", testName + ":2: unknown instruction: COPPY"},
		{"bad flag", "FROM alpine\nCOPY --form=x a /a\n", testName + ":2: unknown flag: --form"},
		{"COPY one arg", "FROM alpine\nCOPY a\n", testName + ":2: COPY requires at least two arguments"},
		{"FROM two args", "FROM alpine foo\n", testName + ":1: FROM requires either one or three arguments"},
		{"unterminated heredoc", "FROM alpine\nCOPY <<EOF /x\nhello\n", testName + ":2: unterminated heredoc"},
		{"invalid UTF-8", "FROM alpine\nENV A=\xff\n", testName + ":2: not valid UTF-8 text"},
		{"NUL byte", "FROM alpine\n\nENV A=\x00\n", testName + ":3: NUL byte in text"},
		{"SHELL not JSON", "FROM alpine\nSHELL bash -c\n", testName + ":2: SHELL requires the arguments to be in JSON form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(testName, strings.NewReader(tt.text))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "error %q\nwant prefix %q", err, tt.want)
			assert.NotContains(t, err.Error(), "\n", "errors are one line")
		})
	}
}

func TestParseAccepted(t *testing.T) {
	tests := []struct {
		name, text string
		named      []string
		main       bool
		args       []string
	}{
		{name: "gitlab form", text: "ARG BASE_IMAGE\nFROM $BASE_IMAGE\nARG TARGETOS\nARG TARGETARCH\n" +
			"COPY --from=binary_dir --chmod=755 gitlab-runner-helper.${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner-helper\n",
			named: []string{"binary_dir"}, args: []string{"BASE_IMAGE", "TARGETOS", "TARGETARCH"}},
		{name: "several contexts and main", text: "FROM scratch\nCOPY --from=a x /x\nCOPY y /y\nADD z /z\nCOPY --from=b x /x\nCOPY --from=a w /w\n",
			named: []string{"a", "b"}, main: true},
		{name: "config-only instructions", text: "# syntax=docker/dockerfile:1\n# escape=\\\nFROM alpine AS final\nMAINTAINER me\nSHELL [\"/bin/bash\", \"-c\"]\n" +
			"HEALTHCHECK --interval=5s --retries=3 CMD curl -f http://localhost/\nSTOPSIGNAL SIGQUIT\nEXPOSE 80 443/udp\n" +
			"LABEL a=b\nUSER 1000\nWORKDIR /app\nVOLUME /data\nENV A=b\nENTRYPOINT [\"x\"]\nCMD y\n"},
		{name: "COPY link and chown numeric", text: "FROM alpine\nCOPY --link --chown=1000:1000 --chmod=0644 a /a\n", main: true},
		{name: "variables checked later", text: "FROM alpine\nARG U M S P\nCOPY --chown=$U --chmod=$M a /a\nSTOPSIGNAL $S\nEXPOSE $P\n",
			main: true, args: []string{"U", "M", "S", "P"}},
		{name: "check directive comment before an instruction", text: "FROM alpine\n# check=skip=all\nENV A=b\n"},
		{name: "ADD unpack false", text: "FROM alpine\nADD --unpack=false x.tar /x\n", main: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, tt.text)
			assert.Equal(t, tt.named, nilIfEmpty(f.NamedContexts()))
			assert.Equal(t, tt.main, f.UsesMainContext())
			assert.Equal(t, tt.args, nilIfEmpty(f.ArgNames()))
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
