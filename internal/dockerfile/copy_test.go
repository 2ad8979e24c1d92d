package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// copyTree is the context most COPY tests read.
func copyTree(t *testing.T) string {
	return makeTree(t,
		node{path: "bin/app", data: "app", mode: 0o755},
		node{path: "bin/tool", data: "tool", mode: 0o700},
		node{path: "conf/a.conf", data: "a"},
		node{path: "conf/sub/b.conf", data: "b", mode: 0o600},
		node{path: "conf/link", link: "a.conf"},
		node{path: "conf/abs", link: "/etc/passwd"},
		node{path: "setuid", data: "s", mode: 0o755 | fs.ModeSetuid},
		node{path: "linkdir", link: "conf"},
		node{path: "linkfile", link: "bin/app"},
		node{path: "chain", link: "linkfile"},
		node{path: "empty", dir: true, mode: 0o750},
		node{path: "x.txt", data: "x"},
		node{path: "y.txt", data: "y"},
		node{path: "z.md", data: "z"},
		node{path: "amd64.arch", data: "amd64"},
	)
}

func TestCopy(t *testing.T) {
	ctxDir := copyTree(t)
	src := func(p string) string { return filepath.Join(ctxDir, filepath.FromSlash(p)) }
	file := func(p, from string, mode fs.FileMode) rootfs.Entry {
		return rootfs.Entry{Path: p, Kind: rootfs.File, Source: src(from), Mode: mode}
	}
	dir := func(p string, mode fs.FileMode) rootfs.Entry {
		return rootfs.Entry{Path: p, Kind: rootfs.Dir, Mode: mode}
	}
	link := func(p, to string) rootfs.Entry {
		return rootfs.Entry{Path: p, Kind: rootfs.Symlink, Linkname: to, Mode: fs.ModePerm}
	}
	own := func(e rootfs.Entry, uid, gid int, mode fs.FileMode) rootfs.Entry {
		e.UID, e.GID = uid, gid
		if mode != 0 {
			e.Mode = mode
		}
		return e
	}
	confTree := func(at string) []rootfs.Entry {
		return []rootfs.Entry{dir(at, 0o755), file(at+"/a.conf", "conf/a.conf", 0o644), link(at+"/abs", "/etc/passwd"),
			link(at+"/link", "a.conf"), dir(at+"/sub", 0o755), file(at+"/sub/b.conf", "conf/sub/b.conf", 0o600)}
	}

	tests := []struct {
		name    string
		from    string // base image, default alpine
		text    string // after FROM
		ctx     Contexts
		steps   []string
		entries []rootfs.Entry // of the last step
	}{
		{name: "file to a file path", text: "COPY --from=c bin/app /usr/bin/helper",
			steps:   []string{"[layer] COPY bin/app /usr/bin/helper # buildkit"},
			entries: []rootfs.Entry{file("/usr/bin/helper", "bin/app", 0o755)}},
		{name: "file into a new directory", text: "COPY --from=c bin/tool /opt/bin/",
			entries: []rootfs.Entry{dir("/opt/bin", 0o755), file("/opt/bin/tool", "bin/tool", 0o700)}},
		{name: "file into a standard directory written without slash", text: "COPY --from=c bin/app /usr/bin",
			entries: []rootfs.Entry{file("/usr/bin/app", "bin/app", 0o755)}},
		{name: "on scratch the same path is a file", from: "scratch", text: "COPY --from=c bin/app /usr/bin",
			entries: []rootfs.Entry{file("/usr/bin", "bin/app", 0o755)}},
		{name: "BaseHasDir", text: "COPY --from=c bin/app /srv", ctx: Contexts{BaseHasDir: func(p string) bool { return p == "/srv" }},
			entries: []rootfs.Entry{file("/srv/app", "bin/app", 0o755)}},
		{name: "relative destinations follow WORKDIR", from: "scratch", text: "WORKDIR /w\nCOPY --from=c x.txt .\nCOPY --from=c y.txt rel/y\nCOPY --from=c z.md ..",
			steps:   []string{"[layer] WORKDIR /w", "[layer] COPY x.txt . # buildkit", "[layer] COPY y.txt rel/y # buildkit", "[layer] COPY z.md .. # buildkit"},
			entries: []rootfs.Entry{file("/z.md", "z.md", 0o644)}},
		{name: "several sources make a directory", text: "COPY --from=c x.txt y.txt /dst",
			entries: []rootfs.Entry{dir("/dst", 0o755), file("/dst/x.txt", "x.txt", 0o644), file("/dst/y.txt", "y.txt", 0o644)}},
		{name: "wildcard with several matches makes a directory", text: "COPY --from=c *.txt /dst",
			entries: []rootfs.Entry{dir("/dst", 0o755), file("/dst/x.txt", "x.txt", 0o644), file("/dst/y.txt", "y.txt", 0o644)}},
		{name: "wildcard with one match copies to the path", text: "COPY --from=c z.* /doc",
			steps: []string{"[layer] COPY z.* /doc # buildkit"}, entries: []rootfs.Entry{file("/doc", "z.md", 0o644)}},
		{name: "wildcards in directories", text: "COPY --from=c con?/*.conf */app /etc/app/",
			entries: []rootfs.Entry{dir("/etc/app", 0o755), file("/etc/app/a.conf", "conf/a.conf", 0o644), file("/etc/app/app", "bin/app", 0o755)}},
		{name: "a directory's contents, links kept", text: "COPY --from=c conf /etc/conf", entries: confTree("/etc/conf")},
		{name: "a directory through a symlink", text: "COPY --from=c linkdir/ /etc/conf/", entries: confTree("/etc/conf")},
		{name: "chown and chmod apply to all but links", text: "COPY --from=c --chown=1000:2000 --chmod=640 conf /c/",
			steps: []string{"[layer] COPY --chown=1000:2000 --chmod=640 conf /c/ # buildkit"},
			entries: []rootfs.Entry{own(dir("/c", 0), 1000, 2000, 0o640), own(file("/c/a.conf", "conf/a.conf", 0), 1000, 2000, 0o640),
				own(link("/c/abs", "/etc/passwd"), 1000, 2000, 0), own(link("/c/link", "a.conf"), 1000, 2000, 0),
				own(dir("/c/sub", 0), 1000, 2000, 0o640), own(file("/c/sub/b.conf", "conf/sub/b.conf", 0), 1000, 2000, 0o640)}},
		{name: "chown uid only", text: "COPY --from=c --chown=42 x.txt /x", entries: []rootfs.Entry{own(file("/x", "x.txt", 0o644), 42, 42, 0)}},
		{name: "chown root names", text: "COPY --from=c --chown=root:root x.txt /x", entries: []rootfs.Entry{file("/x", "x.txt", 0o644)}},
		{name: "a symlinked file is followed", text: "COPY --from=c chain /l", entries: []rootfs.Entry{file("/l", "bin/app", 0o755)}},
		{name: "a symlink into a directory keeps its name", text: "COPY --from=c linkfile /d/", entries: []rootfs.Entry{dir("/d", 0o755), file("/d/linkfile", "bin/app", 0o755)}},
		{name: "setuid kept", text: "COPY --from=c setuid /s", entries: []rootfs.Entry{file("/s", "setuid", 0o755|fs.ModeSetuid)}},
		{name: "chmod with setuid and sticky", text: "COPY --from=c --chmod=5750 x.txt /s", entries: []rootfs.Entry{file("/s", "x.txt", 0o750|fs.ModeSetuid|fs.ModeSticky)}},
		{name: "an empty directory", text: "COPY --from=c empty /e", entries: []rootfs.Entry{dir("/e", 0o750)}},
		{name: "absolute and dotted sources stay in the context", text: "COPY --from=c /bin/./app ./bin/../x.txt /d/",
			entries: []rootfs.Entry{dir("/d", 0o755), file("/d/app", "bin/app", 0o755), file("/d/x.txt", "x.txt", 0o644)}},
		{name: "the same source twice is one entry", text: "COPY --from=c x.txt x.txt /d/",
			entries: []rootfs.Entry{dir("/d", 0o755), file("/d/x.txt", "x.txt", 0o644)}},
		{name: "a later source overwrites an earlier one", text: "COPY --from=c bin/app conf/a.conf linkdir/sub/../a.conf /d/",
			entries: []rootfs.Entry{dir("/d", 0o755), file("/d/app", "bin/app", 0o755), file("/d/a.conf", "conf/a.conf", 0o644)}},
		{name: "directories copied earlier are known", from: "scratch", text: "COPY --from=c bin/app /opt/x/app\nCOPY --from=c x.txt /opt/x",
			entries: []rootfs.Entry{file("/opt/x/x.txt", "x.txt", 0o644)}},
		{name: "build context", text: "COPY x.txt /x\nADD y.txt /y", ctx: Contexts{Main: ctxDir},
			steps:   []string{"[layer] COPY x.txt /x # buildkit", "[layer] ADD y.txt /y # buildkit"},
			entries: []rootfs.Entry{file("/y", "y.txt", 0o644)}},
		{name: "COPY --link is a plain copy", text: "COPY --link --from=c x.txt /x",
			steps: []string{"[layer] COPY x.txt /x # buildkit"}, entries: []rootfs.Entry{file("/x", "x.txt", 0o644)}},
		{name: "variables in sources and destination", text: "ARG TARGETARCH\nENV D=/dst\nCOPY --from=c ${TARGETARCH}.arch $D/",
			steps:   []string{"ARG TARGETARCH=amd64", "ENV D=/dst", "[layer] COPY amd64.arch /dst/ # buildkit"},
			entries: []rootfs.Entry{dir("/dst", 0o755), file("/dst/amd64.arch", "amd64.arch", 0o644)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := tt.from
			if from == "" {
				from = "alpine"
			}
			ctx := tt.ctx
			if ctx.Named == nil {
				ctx.Named = map[string]string{"c": ctxDir}
			}
			res, err := apply(t, "FROM "+from+"\n"+tt.text+"\n", v1.Config{}, ctx)
			require.NoError(t, err)
			got := history(t, res.Steps)
			if tt.steps != nil {
				assert.Equal(t, tt.steps, got)
			}
			require.NotEmpty(t, res.Steps)
			assert.Equal(t, tt.entries, res.Steps[len(res.Steps)-1].Entries)
		})
	}
}

func TestCopyADDArchives(t *testing.T) {
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte("f"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	gz := func(b []byte) string {
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		_, err := w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return out.String()
	}
	ctxDir := makeTree(t,
		node{path: "a.tar", data: tarball.String()},
		node{path: "a.tar.gz", data: gz(tarball.Bytes())},
		node{path: "notes.gz", data: gz([]byte("just text, not a tar"))},
		node{path: "short", data: "hi"},
		node{path: "a.xz", data: "\xfd7zXZ\x00rest"},
	)
	tests := []struct {
		text    string
		wantErr string
	}{
		{text: "ADD a.tar /x/", wantErr: testName + ":2: ADD a.tar: ADD would unpack this archive, which helperbuild does not do; use COPY (or ADD --unpack=false)"},
		{text: "ADD *.gz /x/", wantErr: testName + ":2: ADD a.tar.gz: ADD would unpack this archive"},
		{text: "ADD a.xz /x/", wantErr: "ADD a.xz: ADD would unpack this archive"},
		{text: "ADD --unpack=false a.tar a.tar.gz /x/"},
		{text: "ADD --unpack=true notes.gz short /x/"},
		{text: "COPY a.tar short /x/"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			res, err := apply(t, "FROM alpine\n"+tt.text+"\n", v1.Config{}, Contexts{Main: ctxDir})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Steps, 1)
			assert.Len(t, res.Steps[0].Entries, 3, "the directory and two files, copied as they are")
		})
	}
}

func TestCopyErrors(t *testing.T) {
	ctxDir := copyTree(t)
	fifoDir := makeTree(t, node{path: "d/x", data: "x"})
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifoDir, "d", "pipe"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifoDir, "pipe"), 0o644))
	notDir := filepath.Join(ctxDir, "x.txt")
	tests := []struct {
		name, text, want string
		ctx              Contexts
	}{
		{name: "missing source", text: "COPY --from=c nope /x",
			want: testName + `:2: COPY nope: "nope" not found in context "c" (` + ctxDir + `)`},
		{name: "missing file in a directory", text: "COPY --from=c bin/nope x.txt/y /x/", want: `COPY bin/nope: "bin/nope" not found`},
		{name: "wildcard without match", text: "COPY --from=c *.none /x/", want: `COPY *.none: "*.none" matches nothing in context "c"`},
		{name: "bad pattern", text: "COPY --from=c [ /x/", want: `COPY [: bad pattern "["`},
		{name: "unset variable", text: "COPY --from=c gitlab-runner-helper.${TARGETOS}-${TARGETARCH} /x",
			want: `COPY gitlab-runner-helper.-: "gitlab-runner-helper.-" not found in context "c" (` + ctxDir + `); $TARGETARCH, $TARGETOS expanded to nothing (declare it with ARG after FROM)`},
		{name: "unknown context", text: "COPY --from=bin x /x", ctx: Contexts{Named: map[string]string{"c": ctxDir, "a": ctxDir}},
			want: testName + `:2: COPY --from=bin: no context named "bin" (available: a, c); add it under contexts: in helperbuild.yaml`},
		{name: "empty context directory", text: "COPY --from=e x /x", ctx: Contexts{Named: map[string]string{"e": ""}},
			want: testName + `:2: COPY --from=e: context "e" has no directory`},
		{name: "no named contexts", text: "COPY --from=bin x /x", ctx: Contexts{Main: ctxDir}, want: `no context named "bin" (none are set)`},
		{name: "no build context", text: "COPY x.txt /x", want: testName + ":2: COPY without --from needs a build context, and this image has none"},
		{name: "no build context for ADD", text: "ADD x.txt /x", want: testName + ":2: ADD without --from needs a build context"},
		{name: "missing context directory", text: "COPY --from=c x /x", ctx: Contexts{Named: map[string]string{"c": filepath.Join(ctxDir, "nope")}},
			want: testName + `:2: context "c" ` + filepath.Join(ctxDir, "nope") + ": lstat"},
		{name: "context is a file", text: "COPY --from=c x /x", ctx: Contexts{Named: map[string]string{"c": notDir}},
			want: `context "c" ` + notDir + ` is not a directory`},
		{name: "a fifo", text: "COPY --from=f pipe /x", ctx: Contexts{Named: map[string]string{"f": fifoDir}}, want: `COPY pipe: pipe is a p---------, which cannot be copied`},
		{name: "a fifo in a directory", text: "COPY --from=f d /x", ctx: Contexts{Named: map[string]string{"f": fifoDir}}, want: `COPY d: pipe is a p---------, which cannot be copied`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx.Named == nil && ctx.Main == "" {
				ctx.Named = map[string]string{"c": ctxDir}
			}
			_, err := apply(t, "FROM alpine\n"+tt.text+"\n", v1.Config{}, ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestCopyEscape: nothing outside the context is ever copied or followed.
func TestCopyEscape(t *testing.T) {
	parent := makeTree(t, node{path: "outside.txt", data: "secret"}, node{path: "ctx/x.txt", data: "x"})
	ctxDir := filepath.Join(parent, "ctx")
	for _, n := range []struct{ path, link string }{
		{"passwd", "/etc/passwd"},
		{"up", "../outside.txt"},
		{"parent", ".."},
		{"deep/up", "../../outside.txt"},
		{"inabs", filepath.Join(ctxDir, "x.txt")},
		{"loop1", "loop2"},
		{"loop2", "loop1"},
		{"sub/ok", "../x.txt"},
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ctxDir, n.path)), 0o755))
		require.NoError(t, os.Symlink(n.link, filepath.Join(ctxDir, n.path)))
	}
	ctxLabel := `context "c" (` + ctxDir + `)`
	tests := []struct {
		name, text, want string
		entries          []rootfs.Entry
	}{
		{name: "dot-dot is taken from the context root", text: "COPY --from=c ../outside.txt /x",
			want: `COPY ../outside.txt: "outside.txt" not found in ` + ctxLabel + `; sources are relative to the context root and ".." cannot leave it`},
		{name: "dot-dot inside a path", text: "COPY --from=c x/../../outside.txt /x", want: `"outside.txt" not found in ` + ctxLabel},
		{name: "absolute symlink out", text: "COPY --from=c passwd /x",
			want: testName + `:2: COPY passwd: source "passwd" leads outside ` + ctxLabel + `: symlink "passwd" points to "/etc/passwd"; copy the file itself into the context`},
		{name: "relative symlink out", text: "COPY --from=c up /x", want: `source "up" leads outside ` + ctxLabel + `: symlink "up" points to "../outside.txt"`},
		{name: "through a symlinked directory", text: "COPY --from=c parent/outside.txt /x", want: `source "parent/outside.txt" leads outside ` + ctxLabel + `: symlink "parent" points to ".."`},
		{name: "nested relative symlink out", text: "COPY --from=c deep/up /x", want: `symlink "deep/up" points to "../../outside.txt"`},
		{name: "a wildcard that would follow a link out", text: "COPY --from=c p* /x/", want: `leads outside ` + ctxLabel},
		{name: "a wildcard below a link out", text: "COPY --from=c parent/*.txt /x/", want: `symlink "parent" points to ".."`},
		{name: "symlink loop", text: "COPY --from=c loop1 /x", want: `"loop1": too many levels of symbolic links`},
		{name: "links in a copied directory are kept, not followed", text: "COPY --from=c . /c/",
			entries: []rootfs.Entry{
				{Path: "/c", Kind: rootfs.Dir, Mode: 0o755},
				{Path: "/c/deep", Kind: rootfs.Dir, Mode: 0o755},
				{Path: "/c/deep/up", Kind: rootfs.Symlink, Linkname: "../../outside.txt", Mode: fs.ModePerm},
				{Path: "/c/inabs", Kind: rootfs.Symlink, Linkname: filepath.Join(ctxDir, "x.txt"), Mode: fs.ModePerm},
				{Path: "/c/loop1", Kind: rootfs.Symlink, Linkname: "loop2", Mode: fs.ModePerm},
				{Path: "/c/loop2", Kind: rootfs.Symlink, Linkname: "loop1", Mode: fs.ModePerm},
				{Path: "/c/parent", Kind: rootfs.Symlink, Linkname: "..", Mode: fs.ModePerm},
				{Path: "/c/passwd", Kind: rootfs.Symlink, Linkname: "/etc/passwd", Mode: fs.ModePerm},
				{Path: "/c/sub", Kind: rootfs.Dir, Mode: 0o755},
				{Path: "/c/sub/ok", Kind: rootfs.Symlink, Linkname: "../x.txt", Mode: fs.ModePerm},
				{Path: "/c/up", Kind: rootfs.Symlink, Linkname: "../outside.txt", Mode: fs.ModePerm},
				{Path: "/c/x.txt", Kind: rootfs.File, Source: filepath.Join(ctxDir, "x.txt"), Mode: 0o644},
			}},
		{name: "an absolute link back into the context is followed", text: "COPY --from=c inabs /x",
			entries: []rootfs.Entry{{Path: "/x", Kind: rootfs.File, Source: filepath.Join(ctxDir, "x.txt"), Mode: 0o644}}},
		{name: "a relative link inside the context is followed", text: "COPY --from=c sub/ok /x",
			entries: []rootfs.Entry{{Path: "/x", Kind: rootfs.File, Source: filepath.Join(ctxDir, "x.txt"), Mode: 0o644}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := apply(t, "FROM alpine\n"+tt.text+"\n", v1.Config{}, Contexts{Named: map[string]string{"c": ctxDir}})
			if tt.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.entries, res.Steps[0].Entries)
			for _, e := range res.Steps[0].Entries {
				if e.Kind == rootfs.File {
					assert.True(t, strings.HasPrefix(e.Source, ctxDir+string(filepath.Separator)), "source %s is inside the context", e.Source)
				}
			}
		})
	}
}
