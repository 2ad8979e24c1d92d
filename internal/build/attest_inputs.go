package build

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/execerr"
)

// What the attestations read besides the images: the toolchain's version
// and each binary's build info and digest, each once per run, and as much
// as possible beside the compiles (issue 28).

// goVersion returns a function that asks `go env GOVERSION` in env on its
// first call and waits for the answer, and stop, which ends the child if
// it still runs and returns once it has; after stop no child starts (it
// creates go's cache directory, which the caller may be removing). Most
// runs never ask: the binaries' build info names their toolchain (see
// attestor.toolchain).
func goVersion(ctx context.Context, gocmd string, env []string) (get func() (string, error), stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var running sync.Mutex // held while the child runs
	get = sync.OnceValues(func() (string, error) {
		running.Lock()
		defer running.Unlock()
		if err := ctx.Err(); err != nil {
			return "", err
		}
		cmd := exec.CommandContext(ctx, gocmd, "env", "GOVERSION")
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", execerr.New("attestations: "+gocmd+" env GOVERSION", err, stderr.Bytes())
		}
		return strings.TrimSpace(string(out)), nil
	})
	stop = func() {
		cancel()
		running.Lock()
		defer running.Unlock()
	}
	return get, stop
}

type binaryInfo struct {
	once sync.Once
	bin  attest.Binary
	err  error
	// sum and size, when set, are the file's SHA-256 and size as the layer
	// cache hashed them (see hashed), so only its build info is read.
	sum  v1.Hash
	size int64
}

// hashed is layer.Options.Hashed: it keeps the digest of each layer
// source, so binary reads no file a second time to hash it.
func (a *attestor) hashed(src string, sum v1.Hash, size int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	bi := a.bins[src]
	if bi == nil {
		bi = &binaryInfo{}
		a.bins[src] = bi
	}
	if bi.sum == (v1.Hash{}) {
		bi.sum, bi.size = sum, size
	}
}

// binary reads the build info of the host file src, once however many
// images hold it, under the path the image holds it at.
func (a *attestor) binary(pathInImage, src string) (attest.Binary, error) {
	a.mu.Lock()
	bi := a.bins[src]
	if bi == nil {
		bi = &binaryInfo{}
		a.bins[src] = bi
	}
	sum, size := bi.sum, bi.size
	a.mu.Unlock()
	bi.once.Do(func() {
		if sum != (v1.Hash{}) {
			bi.bin, bi.err = attest.OpenHashedBinary(pathInImage, src, sum, size)
			return
		}
		bi.bin, bi.err = attest.OpenBinary(pathInImage, src)
	})
	b := bi.bin
	b.Path = pathInImage
	return b, bi.err
}
