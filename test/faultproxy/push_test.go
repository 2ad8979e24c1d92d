package faultproxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// multiArch is a two-platform index whose layers are big enough to be cut.
func multiArch(t *testing.T) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		img := mutate.MediaType(testkit.Image(t, v1.Platform{OS: "linux", Architecture: arch}, 64<<10, 2), types.OCIManifestSchema1)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	return idx
}

// client is the retrying transport helperbuild uses, with waits recorded
// instead of slept and no per-attempt timeout: no test here waits for a
// clock (the retry package's tests fire its stall timers by hand).
func client(t *testing.T, logs io.Writer) *retry.Transport {
	t.Helper()
	o := retry.DefaultOptions()
	o.Base, o.Max = time.Millisecond, 2*time.Millisecond // go-containerregistry's upload restarts sleep for real
	o.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	rt, err := retry.New(nil, o)
	require.NoError(t, err)
	return rt
}

func remoteOptions(ctx context.Context, rt *retry.Transport) []remote.Option {
	return append([]remote.Option{remote.WithContext(ctx), remote.WithTransport(rt)}, rt.RemoteOptions()...)
}

func push(ctx context.Context, host string, idx v1.ImageIndex, rt *retry.Transport) error {
	repo, err := name.NewRepository(host + "/g/helper")
	if err != nil {
		return err
	}
	// As helperbuild reaches registries: the retry transport below ggcr,
	// ggcr's own retries left to it.
	session, err := registry.NewSession(imageref.Options{Transport: rt, Remote: rt.RemoteOptions()})
	if err != nil {
		return err
	}
	_, err = publish.ToRegistry(ctx, []publish.Image{{Repository: repo, Index: idx, Tags: []string{"v1", "latest"}}},
		publish.RegistryOptions{Session: session})
	return err
}

func TestPushThroughTransientFaults(t *testing.T) {
	idx := multiArch(t)
	want, err := idx.Digest()
	require.NoError(t, err)

	// The fault-free reference push.
	clean := testkit.Registry(t)
	require.NoError(t, push(t.Context(), clean, idx, client(t, io.Discard)))
	cleanDesc, err := remote.Head(testkit.Ref(t, clean+"/g/helper:v1"))
	require.NoError(t, err)
	require.Equal(t, want, cleanDesc.Digest)

	seen := 0
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			host := testkit.Registry(t)
			p := start(t, Options{Target: "http://" + host, Seed: seed, Rate: 0.3, Faults: stallFree})
			logs := &testkit.Buffer{}
			rt := client(t, logs)
			require.NoError(t, push(t.Context(), p.Addr(), idx, rt), "proxy stats: %+v", p.Stats())

			// What the registry holds, read without the proxy: same digests, every blob intact.
			for _, tag := range []string{"v1", "latest"} {
				desc, err := remote.Head(testkit.Ref(t, host+"/g/helper:"+tag))
				require.NoError(t, err)
				assert.Equal(t, cleanDesc.Digest, desc.Digest)
			}
			stored, err := remote.Index(testkit.Ref(t, host+"/g/helper:v1"))
			require.NoError(t, err)
			require.NoError(t, validate.Index(stored))

			// Pulling through the faults gives the same bytes.
			pulled, err := remote.Index(testkit.Ref(t, p.Addr()+"/g/helper:v1"), remoteOptions(t.Context(), rt)...)
			require.NoError(t, err)
			require.NoError(t, validate.Index(pulled))

			st := p.Stats()
			t.Logf("seed %d: %d requests, faults %v; client: %s", seed, st.Requests, st.Faults, rt.Stats())
			n := answered(st.Injected)
			seen += n
			assert.GreaterOrEqual(t, rt.Stats().Total(), n, "every injected error status costs a retry")
			retryLines := strings.Count(logs.String(), `msg="retrying request"`) + strings.Count(logs.String(), `msg="restarting blob upload"`)
			assert.Equal(t, rt.Stats().Total(), retryLines, "one log line per retry")
		})
	}
	assert.Positive(t, seen, "the seeds injected error statuses at all")
}

// stallFree is every fault but Slow, which only a per-attempt timeout ends.
var stallFree = []Fault{Status5xx, TooMany, ResetMidBody, Truncate}

// answered counts the injections the client is sure to see: an error status
// is a whole response. A connection broken before the answer to a GET or
// HEAD may be resent by net/http itself, unseen (when the connection was
// reused), and a response cut short may never be read (a HEAD has no body).
func answered(injected []Injection) int {
	n := 0
	for _, inj := range injected {
		if inj.Fault == Status5xx || inj.Fault == TooMany {
			n++
		}
	}
	return n
}

func TestPushUnderPersistentFaultFailsClearly(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		wants []string
	}{
		{
			name: "every blob upload reset",
			opts: Options{Persistent: true, Faults: []Fault{ResetMidBody},
				Match: func(r *http.Request) bool { return r.Method == http.MethodPatch }},
			wants: []string{"push ", "/g/helper@sha256:"},
		},
		{
			name: "every manifest PUT answered 5xx",
			opts: Options{Persistent: true, Faults: []Fault{Status5xx},
				Match: func(r *http.Request) bool {
					return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
				}},
			wants: []string{"push ", "faultproxy: injected 50"},
		},
		{
			name:  "every request answered 429",
			opts:  Options{Persistent: true, Faults: []Fault{TooMany}},
			wants: []string{"TOOMANYREQUESTS: faultproxy: injected 429"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := testkit.Registry(t)
			tt.opts.Target = "http://" + host
			p := start(t, tt.opts)
			rt := client(t, io.Discard)
			err := push(t.Context(), p.Addr(), multiArch(t), rt)
			require.Error(t, err)
			for _, w := range tt.wants {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "\n")
			assert.Positive(t, rt.Stats().Total(), "it was retried before giving up")
			_, err = remote.Head(testkit.Ref(t, host+"/g/helper:v1"))
			assert.ErrorContains(t, err, "404", "nothing was tagged")
		})
	}
}
