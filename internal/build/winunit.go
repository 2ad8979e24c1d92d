package build

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/pecheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// windowsHistoryComment marks the layer a Windows unit adds as the image's
// own, as the Dockerfile's steps are marked (verify reads it).
const windowsHistoryComment = "buildkit.dockerfile.v0"

// assembleWindowsUnit builds a Windows entry, config-free or of a recipe
// (whose Dockerfile is not applied): the base of its build (foreign layers
// referenced, never read), one Windows-format layer holding the binary at
// C:\NAME\NAME.exe (NAME the image's last path element), and the base's config
// with that entrypoint and C:\NAME first on PATH. The entry's os.version is
// its base config's.
func assembleWindowsUnit(ctx context.Context, plan *recipe.Plan, u unit, b *bases, binDir string, cache *layer.Cache, opts Options, lopts layer.Options) (v1.Image, []rootfs.Entry, int, error) {
	im := plan.Images[u.image]
	if u.base == nil {
		return nil, nil, 0, &InputError{fmt.Errorf("image %s for %s: a Windows entry needs a Windows base", im.Name, platform.Format(u.platform))}
	}
	out, err := windowsBinary(plan, u)
	if err != nil {
		return nil, nil, 0, err
	}
	if im.Windows != nil {
		opts.Logger.Info("Windows entry: the Dockerfile is not applied", "image", im.Name, "platform", platform.Format(u.platform), "dockerfile", im.DockerfileName, "binary", out, "base", u.baseRef)
	}
	cf, err := u.base.ConfigFile()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("base config: %w", err)
	}
	name := path.Base(im.Name) // a recipe image may be group/app
	exe := platform.ExeName(u.platform, name)
	entries := []rootfs.Entry{{Path: "/" + name + "/" + exe, Kind: rootfs.File, Source: filepath.Join(binDir, out), Mode: 0o755}}
	opts.stage(im.Name, u.platform, progress.Writing, progress.Event{Count: 1, Of: 1})
	start := time.Now()
	lopts.Epoch, lopts.Level, lopts.Windows = opts.Meta.Created, opts.CompressionLevel, true
	l, hit, err := cache.Write(ctx, entries, lopts)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("layer for %s: %w", exe, err)
	}
	d, _ := l.Digest()
	opts.Logger.Info("layer written", "image", im.Name, "platform", platform.Format(u.platform), "digest", d.String(), "cached", hit, "duration", time.Since(start).Round(time.Millisecond))
	fresh := 0
	if !hit {
		fresh = 1
	}
	dir := `C:\` + name
	config := *cf.Config.DeepCopy()
	config.Entrypoint = []string{dir + `\` + exe}
	config.Cmd = nil
	config.Env = windowsPath(config.Env, dir)
	var baseName string
	if a := b.get(u.baseRef); a != nil {
		baseName = pinnedName(a)
	}
	img, err := manifest.Image(manifest.Spec{
		Base:     u.base,
		Platform: v1.Platform{OS: "windows", Architecture: u.platform.Architecture, Variant: u.platform.Variant},
		Config:   config,
		Steps: []manifest.Step{{Layer: l, History: v1.History{
			CreatedBy: fmt.Sprintf(`COPY %s %s\%s # helperbuild, Windows layer`, out, dir, exe),
			Comment:   windowsHistoryComment,
		}}},
		Annotations: opts.Meta.Annotations(baseName, u.baseDig),
		Created:     v1.Time{Time: opts.Meta.Created},
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return img, entries, fresh, nil
}

// windowsBinary is the output file of the binary the Windows unit u holds:
// a config-free package's one, or the one its recipe image names
// (windows.binary).
func windowsBinary(plan *recipe.Plan, u unit) (string, error) {
	im := plan.Images[u.image]
	b := 0
	if im.Windows != nil {
		b = im.Windows.Binary
	}
	for _, pp := range plan.Platforms {
		if platform.Equal(pp.Platform, u.platform) && b < len(pp.Outputs) && pp.Outputs[b] != "" {
			return pp.Outputs[b], nil
		}
	}
	return "", fmt.Errorf("image %s for %s: no binary planned", im.Name, platform.Format(u.platform))
}

// windowsPath puts dir first on the PATH of env (Windows matches the name
// in any case); without one, PATH is dir and the system directories.
func windowsPath(env []string, dir string) []string {
	out := append([]string(nil), env...)
	for i, kv := range out {
		k, v, _ := strings.Cut(kv, "=")
		if strings.EqualFold(k, "PATH") {
			out[i] = k + "=" + dir + ";" + v
			return out
		}
	}
	return append(out, `PATH=`+dir+`;C:\Windows\system32;C:\Windows`)
}

// checkWindowsBinary checks that t's binary is a PE console program for
// its platform, before it goes into a layer.
func checkWindowsBinary(t crossbuild.Target) error {
	if err := pecheck.CheckFile(t.Output, t.Platform); err != nil {
		if errors.Is(err, pecheck.ErrNotPE) {
			return &InputError{fmt.Errorf("%s is not a main package: go build wrote no executable for it (%w)", t.Main, err)}
		}
		return fmt.Errorf("binary %s for %s: %w", t.Main, platform.Format(t.Platform), err)
	}
	return nil
}
