package dockerfile

import (
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// history lists steps as "CreatedBy", with "[layer] " in front of those
// that have a layer, and checks the invariants every step keeps.
func history(t *testing.T, steps []Step) []string {
	t.Helper()
	out := make([]string, len(steps))
	for i, s := range steps {
		assert.Equal(t, historyComment, s.History.Comment)
		assert.True(t, s.History.Created.IsZero())
		assert.Equal(t, s.History.EmptyLayer, s.Entries == nil, "Entries non-nil exactly when there is a layer: %s", s.History.CreatedBy)
		out[i] = s.History.CreatedBy
		if !s.History.EmptyLayer {
			out[i] = "[layer] " + out[i]
		}
	}
	return out
}

const alpinePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func TestApplyConfig(t *testing.T) {
	tests := []struct {
		name   string
		base   v1.Config
		text   string // after "FROM alpine"
		want   v1.Config
		steps  []string
		author string
	}{
		{
			name:  "ENV expands against the running env and replaces in place",
			base:  v1.Config{Env: []string{"PATH=/usr/bin", "HOME=/root"}},
			text:  "ENV A=1 B=$A\nENV HOME /home/x\nENV PATH=/opt/bin:$PATH\nENV C=\"a b\" D=${HOME} E='$HOME'\nENV A=${A}1",
			want:  v1.Config{Env: []string{"PATH=/opt/bin:/usr/bin", "HOME=/home/x", "A=11", "B=", "C=a b", "D=/home/x", "E=$HOME"}},
			steps: []string{"ENV A=1 B=", "ENV HOME=/home/x", "ENV PATH=/opt/bin:/usr/bin", "ENV C=a b D=/home/x E=$HOME", "ENV A=11"},
		},
		{
			name:  "PATH is added when the base has none",
			base:  v1.Config{Env: []string{"HOME=/root"}},
			text:  "ENV A=$PATH",
			want:  v1.Config{Env: []string{"HOME=/root", alpinePath, "A=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
			steps: []string{"ENV A=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
		{
			name:  "LABEL expands and merges with the base",
			base:  v1.Config{Env: []string{alpinePath}, Labels: map[string]string{"a": "base", "keep": "yes"}},
			text:  "ARG V=2\nLABEL a=1 \"b c\"=\"d e\"\nLABEL ver=$V",
			want:  v1.Config{Env: []string{alpinePath}, Labels: map[string]string{"a": "1", "b c": "d e", "keep": "yes", "ver": "2"}},
			steps: []string{"ARG V=2", "LABEL a=1 b c=d e", "LABEL ver=2"},
		},
		{
			name: "USER STOPSIGNAL VOLUME EXPOSE",
			base: v1.Config{Env: []string{alpinePath}, ExposedPorts: map[string]struct{}{"22/tcp": {}}},
			text: "USER 1000:1000\nARG SIG=SIGQUIT\nSTOPSIGNAL $SIG\nVOLUME /data /cache\nVOLUME [\"/x\"]\nEXPOSE 8080 53/udp\nENV P=\"9000 9001/udp\"\nEXPOSE $P\nEXPOSE 7000-7001/TCP",
			want: v1.Config{Env: []string{alpinePath, "P=9000 9001/udp"}, User: "1000:1000", StopSignal: "SIGQUIT",
				Volumes: map[string]struct{}{"/data": {}, "/cache": {}, "/x": {}},
				ExposedPorts: map[string]struct{}{"22/tcp": {}, "8080/tcp": {}, "53/udp": {}, "9000/tcp": {}, "9001/udp": {},
					"7000/tcp": {}, "7001/tcp": {}}},
			steps: []string{"USER 1000:1000", "ARG SIG=SIGQUIT", "STOPSIGNAL SIGQUIT", "VOLUME [/data /cache]", "VOLUME [/x]",
				"EXPOSE [53/udp 8080/tcp]", "ENV P=9000 9001/udp", "EXPOSE [9000/tcp 9001/udp]", "EXPOSE [7000/tcp 7001/tcp]"},
		},
		{
			name:  "ENTRYPOINT clears the base's CMD",
			base:  v1.Config{Env: []string{alpinePath}, Entrypoint: []string{"/old"}, Cmd: []string{"sh"}},
			text:  "ENTRYPOINT [\"/usr/bin/dumb-init\", \"/entrypoint\"]",
			want:  v1.Config{Env: []string{alpinePath}, Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"}},
			steps: []string{`ENTRYPOINT ["/usr/bin/dumb-init" "/entrypoint"]`},
		},
		{
			name:  "CMD before ENTRYPOINT is kept",
			base:  v1.Config{Env: []string{alpinePath}, Cmd: []string{"old"}},
			text:  "CMD [\"sh\"]\nENTRYPOINT [\"/usr/bin/dumb-init\", \"/entrypoint\"]",
			want:  v1.Config{Env: []string{alpinePath}, Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"}, Cmd: []string{"sh"}, ArgsEscaped: true},
			steps: []string{`CMD ["sh"]`, `ENTRYPOINT ["/usr/bin/dumb-init" "/entrypoint"]`},
		},
		{
			name:  "shell forms use /bin/sh -c and are not expanded",
			base:  v1.Config{Env: []string{alpinePath}},
			text:  "ENTRYPOINT exec  /app   --flag\nCMD echo $HOME",
			want:  v1.Config{Env: []string{alpinePath}, Entrypoint: []string{"/bin/sh", "-c", "exec  /app   --flag"}, Cmd: []string{"/bin/sh", "-c", "echo $HOME"}, ArgsEscaped: true},
			steps: []string{`ENTRYPOINT ["/bin/sh" "-c" "exec  /app   --flag"]`, `CMD ["/bin/sh" "-c" "echo $HOME"]`},
		},
		{
			name: "SHELL changes shell forms",
			base: v1.Config{Env: []string{alpinePath}},
			text: "SHELL [\"/bin/bash\", \"-eo\", \"pipefail\", \"-c\"]\nCMD echo hi",
			want: v1.Config{Env: []string{alpinePath}, Shell: []string{"/bin/bash", "-eo", "pipefail", "-c"},
				Cmd: []string{"/bin/bash", "-eo", "pipefail", "-c", "echo hi"}, ArgsEscaped: true},
			steps: []string{"SHELL [/bin/bash -eo pipefail -c]", `CMD ["/bin/bash" "-eo" "pipefail" "-c" "echo hi"]`},
		},
		{
			name:  "the base's SHELL is used",
			base:  v1.Config{Env: []string{alpinePath}, Shell: []string{"/bin/ash", "-c"}},
			text:  "CMD x",
			want:  v1.Config{Env: []string{alpinePath}, Shell: []string{"/bin/ash", "-c"}, Cmd: []string{"/bin/ash", "-c", "x"}, ArgsEscaped: true},
			steps: []string{`CMD ["/bin/ash" "-c" "x"]`},
		},
		{
			name:  "empty ENTRYPOINT",
			base:  v1.Config{Env: []string{alpinePath}, Entrypoint: []string{"/e"}, Cmd: []string{"c"}},
			text:  "ENTRYPOINT []",
			want:  v1.Config{Env: []string{alpinePath}},
			steps: []string{"ENTRYPOINT []"},
		},
		{
			name:   "MAINTAINER sets the author",
			base:   v1.Config{Env: []string{alpinePath}},
			text:   "MAINTAINER John Doe <j@example.com>",
			want:   v1.Config{Env: []string{alpinePath}},
			steps:  []string{"MAINTAINER John Doe <j@example.com>"},
			author: "John Doe <j@example.com>",
		},
		{
			name: "HEALTHCHECK",
			base: v1.Config{Env: []string{alpinePath}},
			text: "HEALTHCHECK --interval=5s --timeout=3s --start-period=1s --retries=3 CMD curl -f http://localhost/",
			want: v1.Config{Env: []string{alpinePath}, Healthcheck: &v1.HealthConfig{Test: []string{"CMD-SHELL", "curl -f http://localhost/"},
				Interval: 5 * time.Second, Timeout: 3 * time.Second, StartPeriod: time.Second, Retries: 3}},
			steps: []string{"HEALTHCHECK {Test:[CMD-SHELL curl -f http://localhost/] Interval:5s Timeout:3s StartPeriod:1s StartInterval:0s Retries:3}"},
		},
		{
			name:  "HEALTHCHECK NONE",
			base:  v1.Config{Env: []string{alpinePath}, Healthcheck: &v1.HealthConfig{Test: []string{"CMD", "x"}}},
			text:  "HEALTHCHECK NONE",
			want:  v1.Config{Env: []string{alpinePath}, Healthcheck: &v1.HealthConfig{Test: []string{"NONE"}}},
			steps: []string{"HEALTHCHECK {Test:[NONE] Interval:0s Timeout:0s StartPeriod:0s StartInterval:0s Retries:0}"},
		},
		{
			name:  "in-stage ARG without value",
			base:  v1.Config{Env: []string{alpinePath}},
			text:  "ARG NOPE\nENV A=x$NOPE",
			want:  v1.Config{Env: []string{alpinePath, "A=x"}},
			steps: []string{"ARG NOPE", "ENV A=x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneConfig(tt.base)
			res, err := apply(t, "FROM alpine\n"+tt.text+"\n", tt.base, Contexts{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Config)
			assert.Equal(t, tt.steps, history(t, res.Steps))
			assert.Equal(t, tt.author, res.Author)
			assert.Equal(t, before, tt.base, "the base config is not modified")
		})
	}
}

func TestApplyScratch(t *testing.T) {
	st := mustResolve(t, "FROM scratch\nCOPY --from=bin app /app\n", Target{Platform: arm64})
	dir := makeTree(t, node{path: "app", data: "x", mode: 0o755})
	res, err := st.Apply(v1.Config{}, Contexts{Named: map[string]string{"bin": dir}})
	require.NoError(t, err)
	assert.Equal(t, v1.Config{Env: []string{alpinePath}, WorkingDir: "/"}, res.Config)
	assert.Equal(t, []string{"[layer] COPY app /app # buildkit"}, history(t, res.Steps))
}

func TestApplyWorkdir(t *testing.T) {
	dir := func(p string, uid, gid int) rootfs.Entry {
		return rootfs.Entry{Path: p, Kind: rootfs.Dir, Mode: 0o755, UID: uid, GID: gid}
	}
	tests := []struct {
		name    string
		from    string
		base    v1.Config
		ctx     Contexts
		text    string
		wd      string
		steps   []string
		entries [][]rootfs.Entry // of the steps with a layer, in order
	}{
		{
			name: "scratch: every new directory is created",
			from: "scratch",
			text: "WORKDIR /app\nWORKDIR sub\nWORKDIR ../other/\nWORKDIR /\nWORKDIR /app\nENV D=/data\nWORKDIR $D",
			wd:   "/data",
			steps: []string{"[layer] WORKDIR /app", "[layer] WORKDIR /app/sub", "[layer] WORKDIR /app/other", "WORKDIR /",
				"[layer] WORKDIR /app", "ENV D=/data", "[layer] WORKDIR /data"},
			entries: [][]rootfs.Entry{{dir("/app", 0, 0)}, {dir("/app/sub", 0, 0)}, {dir("/app/other", 0, 0)}, {}, {dir("/data", 0, 0)}},
		},
		{
			name:    "owned by USER",
			from:    "scratch",
			text:    "USER 1000:2000\nWORKDIR /home/u\nUSER 7\nWORKDIR /w\nUSER root\nWORKDIR /r",
			wd:      "/r",
			steps:   []string{"USER 1000:2000", "[layer] WORKDIR /home/u", "USER 7", "[layer] WORKDIR /w", "USER root", "[layer] WORKDIR /r"},
			entries: [][]rootfs.Entry{{dir("/home/u", 1000, 2000)}, {dir("/w", 7, 7)}, {dir("/r", 0, 0)}},
		},
		{
			name:    "standard directories of a base exist",
			from:    "alpine",
			base:    v1.Config{WorkingDir: "/root"},
			text:    "WORKDIR /tmp\nWORKDIR /usr/local/bin\nWORKDIR /root\nWORKDIR rel",
			wd:      "/root/rel",
			steps:   []string{"[layer] WORKDIR /tmp", "[layer] WORKDIR /usr/local/bin", "[layer] WORKDIR /root", "[layer] WORKDIR /root/rel"},
			entries: [][]rootfs.Entry{{}, {}, {}, {dir("/root/rel", 0, 0)}},
		},
		{
			name:    "BaseHasDir decides",
			from:    "alpine",
			ctx:     Contexts{BaseHasDir: func(p string) bool { return p == "/srv/app" }},
			text:    "WORKDIR /srv/app\nWORKDIR /tmp",
			wd:      "/tmp",
			steps:   []string{"[layer] WORKDIR /srv/app", "[layer] WORKDIR /tmp"},
			entries: [][]rootfs.Entry{{}, {dir("/tmp", 0, 0)}},
		},
		{
			name:    "a WORKDIR and its parents exist afterwards",
			from:    "scratch",
			text:    "WORKDIR /a/b\nWORKDIR /a",
			wd:      "/a",
			steps:   []string{"[layer] WORKDIR /a/b", "[layer] WORKDIR /a"},
			entries: [][]rootfs.Entry{{dir("/a/b", 0, 0)}, {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustResolve(t, "FROM "+tt.from+"\n"+tt.text+"\n", Target{})
			res, err := st.Apply(tt.base, tt.ctx)
			require.NoError(t, err)
			assert.Equal(t, tt.wd, res.Config.WorkingDir)
			assert.Equal(t, tt.steps, history(t, res.Steps))
			var entries [][]rootfs.Entry
			for _, s := range res.Steps {
				if s.Entries != nil {
					entries = append(entries, s.Entries)
				}
			}
			assert.Equal(t, tt.entries, entries)
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
		base             v1.Config
	}{
		{name: "ONBUILD in the base", text: "FROM alpine\nENV A=b\n", base: v1.Config{OnBuild: []string{"RUN make"}},
			want: testName + `:1: base image alpine has ONBUILD triggers ["RUN make"], which helperbuild cannot run`},
		{name: "WORKDIR owned by a user name", text: "FROM alpine\nUSER gitlab-runner\nWORKDIR /home/gitlab-runner\n",
			want: testName + `:3: WORKDIR /home/gitlab-runner creates the directory owned by USER gitlab-runner: user and group names ("gitlab-runner") need the base image's /etc/passwd`},
		{name: "WORKDIR owned by the base's user name", text: "FROM alpine\nWORKDIR /new\n", base: v1.Config{User: "nobody"},
			want: testName + `:2: WORKDIR /new creates the directory owned by USER nobody`},
		{name: "bad expansion", text: "FROM alpine\n\nENV A=${B\n", want: testName + ":3: failed to process \"${B\""},
		{name: "STOPSIGNAL after expansion", text: "FROM alpine\nARG S=NOPE\nSTOPSIGNAL $S\n", want: testName + ":3: STOPSIGNAL NOPE: invalid signal"},
		{name: "EXPOSE after expansion", text: "FROM alpine\nENV P=x\nEXPOSE $P\n", want: testName + `:3: EXPOSE x: invalid containerPort: x`},
		{name: "chown after expansion", text: "FROM alpine\nARG U=www\nCOPY --from=c --chown=$U a /a\n",
			want: testName + `:3: COPY --chown=www: user and group names ("www")`},
		{name: "chmod after expansion", text: "FROM alpine\nARG M=999\nCOPY --from=c --chmod=$M a /a\n",
			want: testName + `:3: COPY --chmod=999: invalid chmod parameter "999"`},
		{name: "ADD URL after expansion", text: "FROM alpine\nARG U=https://example.com/x\nADD $U /x\n",
			want: testName + ":3: ADD https://example.com/x: ADD of a URL needs the network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := apply(t, tt.text, tt.base, Contexts{Named: map[string]string{"c": t.TempDir()}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
