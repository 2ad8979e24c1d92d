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

// goVersion starts `go env GOVERSION` in env and returns a function that
// waits for its answer, and stop, which ends the child if it still runs and
// returns once it has: a run that fails early must not leave it behind
// (it creates go's cache directory, which the caller may be removing).
func goVersion(ctx context.Context, gocmd string, env []string) (get func() (string, error), stop func()) {
	type answer struct {
		v   string
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan answer, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd := exec.CommandContext(ctx, gocmd, "env", "GOVERSION")
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			ch <- answer{err: execerr.New("attestations: "+gocmd+" env GOVERSION", err, stderr.Bytes())}
			return
		}
		ch <- answer{v: strings.TrimSpace(string(out))}
	}()
	get = sync.OnceValues(func() (string, error) {
		a := <-ch
		return a.v, a.err
	})
	stop = func() {
		cancel()
		<-done
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
