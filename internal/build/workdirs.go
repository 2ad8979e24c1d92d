package build

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// workDirs returns where binaries are compiled to and the layer cache.
// With a cache directory, binaries stay between runs (one directory per
// module root), so an unchanged commit costs `go build` no link step and
// its layers come from the cache; without one, both live in the run's
// temporary directory.
func workDirs(plan *recipe.Plan, opts Options) (string, *layer.Cache, error) {
	root := opts.CacheDir
	if root == "" {
		root = opts.TempDir
	}
	sum := sha256.Sum256([]byte(plan.Dir))
	binDir := filepath.Join(root, "binaries", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", nil, err
	}
	return binDir, &layer.Cache{Dir: filepath.Join(root, "layers")}, nil
}
