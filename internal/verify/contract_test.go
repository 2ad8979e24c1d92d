package verify

import (
	"archive/tar"
	"context"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

func TestContract(t *testing.T) {
	bin := bins["amd64"]
	runnerCfg := v1.Config{Env: []string{"PATH=" + defaultPath}}
	tests := []struct {
		name     string
		contract string
		cfg      v1.Config
		layers   func() []lay
		want     []string
		warn     []string
		needs    string // key of bins the case needs
	}{
		{
			name: "good helper", contract: ContractHelper, cfg: helperConfigOK(),
			layers: func() []lay { return []lay{busyboxBase(bin), helperOwn(bin)} },
		},
		{
			name: "good runner", contract: ContractRunner, cfg: runnerCfg,
			layers: func() []lay { return []lay{busyboxBase(bin), runnerOwn(bin)} },
		},
		{
			name: "helper binary dynamically linked", contract: ContractHelper, cfg: helperConfigOK(), needs: "cgo",
			layers: func() []lay { return []lay{busyboxBase(bin), helperOwn(bins["cgo"])} },
			want:   []string{"/usr/bin/gitlab-runner-helper is dynamically linked: the runner copies it into build containers, it must be static"},
			warn:   []string{"/usr/bin/gitlab-runner-helper: Go binary built with CGO_ENABLED=1"},
		},
		{
			name: "helper binary is a script", contract: ContractHelper, cfg: helperConfigOK(),
			layers: func() []lay {
				return []lay{busyboxBase(bin), helperOwn(bin), own(script("usr/bin/gitlab-runner-helper", "#!/bin/sh\nexec /opt/helper \"$@\"\n"))}
			},
			want: []string{"/usr/bin/gitlab-runner-helper is not an ELF binary: the runner copies it into build containers, it must be static"},
		},
		{
			name: "helper config from a generic image", contract: ContractHelper,
			cfg:    v1.Config{Entrypoint: []string{"/entrypoint"}, User: "nobody"},
			layers: func() []lay { return []lay{busyboxBase(bin), helperOwn(bin)} },
			want: []string{
				`entrypoint is ["/entrypoint"], want ["/usr/bin/dumb-init", "/entrypoint"]: dumb-init must be PID 1 to forward signals and reap processes`,
				`cmd is [], want ["sh"]: a helper started without a command must get a shell, as upstream's does`,
				"config has no PATH: executors run gitlab-runner-helper, gitlab-runner-build and the tools by name",
				"config user is nobody, want root: the helper prepares build directories, caches and artifacts as root",
			},
		},
		{
			name: "helper with a different PATH is a warning", contract: ContractHelper,
			cfg: func() v1.Config {
				c := helperConfigOK()
				c.Env = []string{"PATH=/usr/bin:/bin"}
				return c
			}(),
			layers: func() []lay { return []lay{busyboxBase(bin), helperOwn(bin)} },
			warn:   []string{"config PATH is /usr/bin:/bin, upstream uses " + defaultPath},
		},
		{
			name: "helper scripts that do not exec or umask", contract: ContractHelper, cfg: helperConfigOK(),
			layers: func() []lay {
				return []lay{busyboxBase(bin), helperOwn(bin), own(
					script("usr/bin/gitlab-runner-build", "#!/bin/bash\nexec /bin/bash\n"),
					script("entrypoint", "#!/bin/sh\n\"$@\"\n# done\n\n"),
				)}
			},
			want: []string{
				"/usr/bin/gitlab-runner-build does not run umask 0000: files the helper creates must be usable by the build container's user",
				`/entrypoint does not end with exec "$@" (last line "\"$@\""): the container's command must replace the entrypoint script`,
			},
		},
		{
			name: "dangling symlink, symlink loop, entrypoint without x bit", contract: ContractHelper, cfg: helperConfigOK(),
			layers: func() []lay {
				return []lay{busyboxBase(bin), helperOwn(bin), own(
					tartest.Symlink("bin/bash", "/bin/bash5"),
					tartest.Symlink("usr/bin/env", "env2"), tartest.Symlink("usr/bin/env2", "./env"),
					tartest.File("entrypoint", 0o644, []byte("#!/bin/sh\nexec \"$@\"\n")),
				)}
			},
			want: []string{
				"/bin/bash missing (symlink to /bin/bash5 leads nowhere): gitlab-runner-build runs every stage with /bin/bash",
				"/usr/bin/env missing (too many levels of symbolic links): scripts the runner generates start with #!/usr/bin/env",
				"/entrypoint is not executable by root (mode 0644): the ENTRYPOINT runs it",
			},
		},
		{
			name: "whiteout of a directory removes everything below it", contract: ContractHelper, cfg: helperConfigOK(),
			layers: func() []lay {
				return []lay{busyboxBase(bin), helperOwn(bin), own(tartest.File("etc/ssl/.wh.certs", 0, nil))}
			},
			want: []string{"/etc/ssl/certs/ca-certificates.crt missing: HTTPS to GitLab and the registry needs a CA bundle"},
		},
		{
			name: "runner without dumb-init", contract: ContractRunner, cfg: runnerCfg,
			layers: func() []lay { return []lay{busyboxBase(bin, "usr/bin/dumb-init"), runnerOwn(bin)} },
			want:   []string{"/usr/bin/dumb-init missing: the Helm chart runs /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint"},
		},
		{
			name: "runner as a root-only image", contract: ContractRunner, cfg: runnerCfg,
			layers: func() []lay {
				return []lay{busyboxBase(bin, "etc/passwd", "tmp/"), runnerOwn(bin), own(
					tartest.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n")),
					tartest.Dir("tmp/", 0o755),
					tartest.File("usr/bin/gitlab-runner", 0o700, bin),
					script("entrypoint", "#!/bin/bash\nexec gitlab-runner\n"),
				)}
			},
			want: []string{
				"/etc/passwd has no user with uid 100 or 999 and home /home/gitlab-runner: the Helm chart runs the runner as uid 100 (Alpine) or 999 (Ubuntu) with home /home/gitlab-runner",
				`/entrypoint does not end with exec gitlab-runner "$@" (last line "exec gitlab-runner"): the Helm chart's scripts call /entrypoint register, /entrypoint run and /entrypoint unregister --all-runners`,
				"/tmp is not writable by uid 100 (owner 0, mode 0755): the runner and the chart's scripts write temporary files",
				"/usr/bin/gitlab-runner is not executable by uid 100 (mode 0700): /entrypoint execs gitlab-runner",
			},
		},
		{
			name: "ubuntu runner: uid 999, group-executable binary", contract: ContractRunner, cfg: runnerCfg,
			layers: func() []lay {
				return []lay{busyboxBase(bin, "etc/passwd", "home/gitlab-runner/"), runnerOwn(bin), own(
					tartest.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:999:999::/home/gitlab-runner/:/bin/bash\n")),
					tartest.Entry{Name: "home/gitlab-runner", Type: tar.TypeDir, Mode: 0o700, UID: 999, GID: 999},
					tartest.Entry{Name: "usr/bin/gitlab-runner", Type: tar.TypeReg, Mode: 0o750, GID: 999, Body: bin},
					tartest.Entry{Name: "usr/share/gitlab-runner/clear-docker-cache", Type: tar.TypeReg, Mode: 0o754, Body: []byte("#!/bin/sh\n")},
				)}
			},
			want: []string{"/usr/share/gitlab-runner/clear-docker-cache is not executable by uid 999 (mode 0754): the runner package ships it to clean up Docker executor caches"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needs != "" {
				require.NotNil(t, bins[tt.needs], "the %s test binary", tt.needs)
			}
			img := testImage(t, amd64, tt.cfg, tt.layers()...)
			r, err := Image(context.Background(), img, Options{Platforms: []v1.Platform{amd64}, Contract: tt.contract, TempDir: t.TempDir()})
			require.NoError(t, err)
			require.Len(t, r.Platforms, 1)
			var got, warn []string
			for _, c := range r.Platforms[0].Checks {
				switch {
				case c.Name == CheckContract && !c.OK:
					got = append(got, c.Reason)
				case !c.OK:
					t.Errorf("unexpected %s failure: %s", c.Name, c.Reason)
				case c.Warning:
					warn = append(warn, c.Reason)
				}
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.warn, warn)
			assert.Empty(t, r.Problems)
			assert.Equal(t, tt.want == nil, r.OK())
		})
	}
}
