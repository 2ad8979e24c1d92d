package layer

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

func TestPlanOrderAndParents(t *testing.T) {
	got, err := plan([]rootfs.Entry{
		{Path: "/a-b", Kind: rootfs.Dir, Mode: 0o700},
		{Path: "/a/b/c", Kind: rootfs.File, Source: "x", Mode: 0o644, UID: 7, GID: 8},
	})
	require.NoError(t, err)
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"/a", "/a/b", "/a/b/c", "/a-b"}, paths)
	assert.Equal(t, rootfs.Entry{Path: "/a", Kind: rootfs.Dir, Mode: 0o755}, got[0], "implicit parent is 0755 0:0")
	assert.Equal(t, rootfs.Entry{Path: "/a/b/c", Kind: rootfs.File, Source: "x", Mode: 0o644, UID: 7, GID: 8}, got[2])
}

func TestPlanKeepsExplicitParent(t *testing.T) {
	got, err := plan([]rootfs.Entry{
		{Path: "/opt/tool", Kind: rootfs.File, Source: "x", Mode: 0o755},
		{Path: "/opt/", Kind: rootfs.Dir, Mode: 0o700, UID: 5, GID: 5},
		{Path: "/opt/link", Kind: rootfs.Symlink, Linkname: "tool"},
	})
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, rootfs.Entry{Path: "/opt", Kind: rootfs.Dir, Mode: 0o700, UID: 5, GID: 5}, got[0])
	assert.Equal(t, fs.FileMode(0o777), got[1].Mode, "zero symlink mode becomes 0777")
	assert.Equal(t, "/opt/tool", got[2].Path)
}

func TestPlanRejects(t *testing.T) {
	file := func(p string) rootfs.Entry {
		return rootfs.Entry{Path: p, Kind: rootfs.File, Source: "src", Mode: 0o644}
	}
	tests := []struct {
		name    string
		entries []rootfs.Entry
		want    string
	}{
		{"duplicate", []rootfs.Entry{file("/a"), file("/a")}, `"/a": duplicate path /a`},
		{"duplicate after cleaning", []rootfs.Entry{{Path: "/d", Kind: rootfs.Dir}, {Path: "/d/./", Kind: rootfs.Dir}}, `"/d/./": duplicate path /d`},
		{"relative", []rootfs.Entry{file("usr/bin/x")}, `"usr/bin/x": path must be absolute`},
		{"empty", []rootfs.Entry{file("")}, `"": path must be absolute`},
		{"dotdot", []rootfs.Entry{file("/usr/../etc/passwd")}, `"/usr/../etc/passwd": path must not contain ".."`},
		{"dotdot above root", []rootfs.Entry{file("/../x")}, `"/../x": path must not contain ".."`},
		{"root", []rootfs.Entry{{Path: "/", Kind: rootfs.Dir}}, `"/": the root directory`},
		{"nul", []rootfs.Entry{file("/a\x00b")}, "NUL"},
		{"parent is file", []rootfs.Entry{file("/a"), file("/a/b")}, `"/a/b": parent /a is not a directory`},
		{"parent is symlink", []rootfs.Entry{{Path: "/lib", Kind: rootfs.Symlink, Linkname: "usr/lib"}, file("/lib/x/y")}, `parent /lib is not a directory`},
		{"type bits in mode", []rootfs.Entry{{Path: "/d", Kind: rootfs.Dir, Mode: fs.ModeDir | 0o755}}, `"/d": mode`},
		{"negative uid", []rootfs.Entry{{Path: "/d", Kind: rootfs.Dir, UID: -1}}, `"/d": negative uid/gid -1:0`},
		{"file without source", []rootfs.Entry{{Path: "/f", Kind: rootfs.File}}, `"/f": a file needs Source`},
		{"dir with source", []rootfs.Entry{{Path: "/d", Kind: rootfs.Dir, Source: "x"}}, `"/d": a directory takes`},
		{"symlink without target", []rootfs.Entry{{Path: "/l", Kind: rootfs.Symlink}}, `"/l": a symlink needs Linkname`},
		{"unknown kind", []rootfs.Entry{{Path: "/k", Kind: rootfs.Kind(9)}}, `"/k": unknown kind 9`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan(tt.entries)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestComparePaths(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"/a", "/a", 0},
		{"/a", "/a/b", -1},
		{"/a/b", "/a-b", -1},
		{"/a-b", "/a/b", 1},
		{"/a/z", "/aa", -1},
		{"/b", "/a/z", 1},
		{"/usr/bin", "/usr/bin2", -1},
	}
	for _, tt := range tests {
		got := comparePaths(tt.a, tt.b)
		assert.Equal(t, tt.want, sign(got), "comparePaths(%q, %q)", tt.a, tt.b)
		assert.Equal(t, -tt.want, sign(comparePaths(tt.b, tt.a)), "comparePaths(%q, %q)", tt.b, tt.a)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// FuzzPlan checks the invariants of a successful plan for arbitrary paths:
// every path clean, absolute and unique, no "..", parents present as
// directories and sorted before their children.
func FuzzPlan(f *testing.F) {
	f.Add("/usr/bin/x", "/usr/lib/", "/a-b")
	f.Add("/a/../b", "b", "/")
	f.Add("//x//y/", "/x", "/x/y/z")
	f.Fuzz(func(t *testing.T, p1, p2, p3 string) {
		var in []rootfs.Entry
		for i, p := range []string{p1, p2, p3} {
			if i == 0 {
				in = append(in, rootfs.Entry{Path: p, Kind: rootfs.File, Source: "s", Mode: 0o644})
			} else {
				in = append(in, rootfs.Entry{Path: p, Kind: rootfs.Dir, Mode: 0o755})
			}
		}
		got, err := plan(in)
		if err != nil {
			assert.NotContains(t, err.Error(), "\n")
			return
		}
		index := map[string]int{}
		for i, e := range got {
			require.True(t, strings.HasPrefix(e.Path, "/"), e.Path)
			require.Equal(t, path.Clean(e.Path), e.Path)
			require.NotEqual(t, "/", e.Path)
			require.NotContains(t, strings.Split(e.Path, "/"), "..")
			_, dup := index[e.Path]
			require.False(t, dup, "duplicate %s", e.Path)
			index[e.Path] = i
			if parent := path.Dir(e.Path); parent != "/" {
				j, ok := index[parent]
				require.True(t, ok, "parent of %s missing or after it", e.Path)
				require.Equal(t, rootfs.Dir, got[j].Kind)
			}
		}
		require.True(t, slices.IsSortedFunc(got, func(a, b rootfs.Entry) int { return comparePaths(a.Path, b.Path) }))
	})
}
