package verify

import (
	"context"
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

// failures lists "platform check: reason" for every failed check and
// problem ("index check: reason" for a problem about no platform).
func failures(r *Report) []string {
	var out []string
	for _, f := range r.Findings() {
		if f.Severity == SeverityWarning {
			continue
		}
		where := f.Platform
		if where == "" {
			where = "index"
		}
		out = append(out, where+" "+f.Check+": "+f.Reason)
	}
	return out
}

func goodHelper(t testing.TB, p v1.Platform, arch string) v1.Image {
	return testImage(t, p, helperConfigOK(), busyboxBase(bins[arch]), helperOwn(bins[arch]))
}

func goodRunner(t testing.TB, p v1.Platform, arch string) v1.Image {
	return testImage(t, p, v1.Config{Env: []string{"PATH=" + defaultPath}}, busyboxBase(bins[arch]), runnerOwn(bins[arch]))
}

func TestIndex(t *testing.T) {
	tests := []struct {
		name     string
		index    func(t testing.TB) v1.ImageIndex
		opts     Options
		want     []string // exactly the failures expected; nil for a passing report
		wantWarn string   // a warning that must be present
	}{
		{
			name: "good helper index",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{amd64, goodHelper(t, amd64, "amd64")}, listed{arm64, goodHelper(t, arm64, "arm64")})
			},
			opts: Options{Platforms: []v1.Platform{amd64, arm64}, Contract: ContractHelper},
		},
		{
			name: "good helper index with gzip layers",
			index: func(t testing.TB) v1.ImageIndex {
				gz := func(l lay) lay { l.gzip = true; return l }
				return testIndex(t, listed{arm64, testImage(t, arm64, helperConfigOK(), gz(busyboxBase(bins["arm64"])), gz(helperOwn(bins["arm64"])))})
			},
			opts: Options{Platforms: []v1.Platform{arm64}, Contract: ContractHelper, AllFiles: true},
		},
		{
			name: "good runner index",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{amd64, goodRunner(t, amd64, "amd64")}, listed{arm64, goodRunner(t, arm64, "arm64")})
			},
			opts: Options{Platforms: []v1.Platform{amd64, arm64}, Contract: ContractRunner, AllFiles: true},
		},
		{
			name: "arm64 entry holds an amd64 binary",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{amd64, goodHelper(t, amd64, "amd64")},
					listed{arm64, testImage(t, arm64, helperConfigOK(), busyboxBase(bins["arm64"]), helperOwn(bins["amd64"]))})
			},
			opts: Options{Platforms: []v1.Platform{amd64, arm64}, Contract: ContractHelper},
			want: []string{"linux/arm64 arch: /usr/bin/gitlab-runner-helper is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64"},
		},
		{
			name: "amd64 busybox in the arm64 base is found with AllFiles only",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{arm64, testImage(t, arm64, helperConfigOK(), busyboxBase(bins["amd64"]), helperOwn(bins["arm64"]))})
			},
			opts: Options{Platforms: []v1.Platform{arm64}, AllFiles: true},
			want: []string{"linux/arm64 arch: /bin/busybox is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64"},
		},
		{
			name: "index missing s390x",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{amd64, goodHelper(t, amd64, "amd64")}, listed{arm64, goodHelper(t, arm64, "arm64")})
			},
			opts: Options{Platforms: []v1.Platform{amd64, arm64, plat("linux", "s390x", "")}},
			want: []string{"linux/s390x coverage: missing from the index"},
		},
		{
			name: "arm entry without variant",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{amd64, goodHelper(t, amd64, "amd64")}, listed{plat("linux", "arm", ""), testImage(t, plat("linux", "arm", ""), v1.Config{})})
			},
			opts: Options{Platforms: []v1.Platform{amd64, plat("linux", "arm", "")}},
			want: []string{"linux/arm coverage: the entry has no variant; expected linux/arm/v7"},
		},
		{
			name: "extra and duplicate platforms",
			index: func(t testing.TB) v1.ImageIndex {
				img := testImage(t, arm64, v1.Config{})
				return testIndex(t, listed{arm64, img}, listed{plat("linux", "arm64", "v8"), img}, listed{armv7, testImage(t, armv7, v1.Config{})})
			},
			opts: Options{Platforms: []v1.Platform{arm64}},
			want: []string{
				"linux/arm64/v8 coverage: linux/arm64 is listed more than once: runtimes pull only the first",
				"linux/arm/v7 coverage: in the index but not expected",
			},
		},
		{
			name: "config architecture disagrees with the descriptor",
			index: func(t testing.TB) v1.ImageIndex {
				return testIndex(t, listed{arm64, goodHelper(t, amd64, "arm64")})
			},
			opts: Options{Platforms: []v1.Platform{arm64}},
			want: []string{"linux/arm64 config: config says linux/amd64 but the index lists it as linux/arm64"},
		},
		{
			name: "runner without dumb-init",
			index: func(t testing.TB) v1.ImageIndex {
				img := testImage(t, amd64, v1.Config{}, busyboxBase(bins["amd64"], "usr/bin/dumb-init"), runnerOwn(bins["amd64"]))
				return testIndex(t, listed{amd64, img})
			},
			opts: Options{Contract: ContractRunner},
			want: []string{"linux/amd64 contract: /usr/bin/dumb-init missing: the Helm chart runs /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint"},
		},
		{
			name: "whiteout deletes /bin/bash in an upper layer",
			index: func(t testing.TB) v1.ImageIndex {
				img := testImage(t, amd64, helperConfigOK(), busyboxBase(bins["amd64"]), helperOwn(bins["amd64"]), own(tartest.File("bin/.wh.bash", 0o644, nil)))
				return testIndex(t, listed{amd64, img})
			},
			opts: Options{Contract: ContractHelper},
			want: []string{"linux/amd64 contract: /bin/bash missing: gitlab-runner-build runs every stage with /bin/bash"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := tt.index(t)
			if tt.want == nil {
				require.NoError(t, validate.Index(idx, validate.Fast))
			}
			tt.opts.TempDir = t.TempDir()
			r, err := Index(context.Background(), idx, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, failures(r))
			assert.Equal(t, tt.want == nil, r.OK())
			d, err := idx.Digest()
			require.NoError(t, err)
			assert.Equal(t, d.String(), r.Digest)
			if tt.wantWarn != "" {
				assert.Contains(t, warnings(r), tt.wantWarn)
			}
			entries, err := os.ReadDir(tt.opts.TempDir)
			require.NoError(t, err)
			assert.Empty(t, entries, "spooled ELF files must be removed")
		})
	}
}

func warnings(r *Report) []string {
	var out []string
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if c.Warning {
				out = append(out, p.Platform+" "+c.Name+": "+c.Reason)
			}
		}
	}
	return out
}
