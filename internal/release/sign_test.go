package release

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/retry"
	"github.com/helperbuild/helperbuild/internal/sign"
)

var signPlatforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "arm", Variant: "v7"},
	{OS: "linux", Architecture: "ppc64le"}, {OS: "linux", Architecture: "s390x"},
}

func localSigner(t testing.TB) (*Signer, string) {
	t.Helper()
	k, err := sign.GenerateKey()
	require.NoError(t, err)
	s, err := sign.New(sign.Options{Key: k})
	require.NoError(t, err)
	pub, err := k.GetPublicKeyPem()
	require.NoError(t, err)
	return NewSigner(s, func() time.Time { return time.Unix(1700000000, 0) }), pub
}

// TestSignedReleaseVerifies: a five-platform release signed with a local
// key through publish verifies with sign's verifier, in both formats, and
// the signer keeps each bundle for --attest-dir. (The in-process
// registry has no .sig tag of a legacy-referrer release, so the verifier
// found the referrer.)
func TestSignedReleaseVerifies(t *testing.T) {
	plain, api := testkit.Registry(t), testkit.ReferrersRegistry(t)
	for _, tc := range []struct {
		format publish.SignFormat
		host   string
	}{{publish.SignBundle, plain}, {publish.SignLegacy, plain}, {publish.SignBundle, api},
		{publish.SignLegacyReferrer, plain}, {publish.SignLegacyReferrer, api}} {
		format, host := tc.format, tc.host
		t.Run(string(format)+" "+map[bool]string{true: "referrers API", false: "fallback tag"}[host == api], func(t *testing.T) {
			idx := testkit.Index(t, 512, 1, signPlatforms...)
			repo, err := name.NewRepository(host + "/g/" + string(format) + map[bool]string{true: "-api"}[host == api])
			require.NoError(t, err)
			s, pub := localSigner(t)
			res, err := publish.ToRegistry(context.Background(), []publish.Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}},
				publish.RegistryOptions{Signing: publish.Signing{Signer: s, Format: format}})
			require.NoError(t, err)
			require.Len(t, res.Signatures, 6, "the index and five platform manifests")
			v, err := sign.NewVerifier(sign.Policy{PublicKeyPEM: []byte(pub), IgnoreTlog: true})
			require.NoError(t, err)
			for _, sig := range res.Signatures {
				found, err := v.VerifyDigest(context.Background(), repo, sig.Subject, registry.Reader{})
				require.NoError(t, err)
				assert.Equal(t, string(format), found.Valid, "%s: %s", sig.Subject, found.Reason)
			}
			if format == publish.SignBundle {
				assert.Len(t, s.Bundles(), 6)
			}
			other, otherPub := localSigner(t)
			_ = other
			v, err = sign.NewVerifier(sign.Policy{PublicKeyPEM: []byte(otherPub), IgnoreTlog: true})
			require.NoError(t, err)
			found, err := v.VerifyDigest(context.Background(), repo, res.Signatures[1].Subject, registry.Reader{})
			require.NoError(t, err)
			assert.Empty(t, found.Valid, "another key's verifier refuses")
			assert.Contains(t, found.Reason, "none valid")
		})
	}
}

// BenchmarkSignRelease measures what signing adds to publishing a
// five-platform release with a local key: each iteration publishes the
// same release to a fresh repository, signed (bundles) or not, on a
// registry with the referrers API (signing's own cost) and on one without
// (the bundles' fallback tags, and publish's settle pause before reading
// them back, at least 250ms). Compare signed with unsigned per registry.
func BenchmarkSignRelease(b *testing.B) {
	idx := testkit.Index(b, 64<<10, 1, signPlatforms...)
	for _, reg := range []struct {
		name string
		host string
	}{{"referrers-api", testkit.ReferrersRegistry(b)}, {"fallback-tag", testkit.Registry(b)}} {
		for _, signed := range []bool{false, true} {
			b.Run(reg.name+"/"+map[bool]string{false: "unsigned", true: "signed"}[signed], func(b *testing.B) {
				s, _ := localSigner(b)
				n := 0
				for b.Loop() {
					n++
					repo, err := name.NewRepository(fmt.Sprintf("%s/bench/%t-%d", reg.host, signed, n))
					require.NoError(b, err)
					opts := publish.RegistryOptions{}
					if signed {
						opts.Signing = publish.Signing{Signer: s, Format: publish.SignBundle}
					}
					_, err = publish.ToRegistry(context.Background(), []publish.Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, opts)
					require.NoError(b, err)
				}
			})
		}
	}
}

// TestRekorDownMovesNoTag: a transparency log that keeps answering 503 is
// retried, then the release fails before its tag phase: no tag moved,
// neither the release's nor a signature's.
func TestRekorDownMovesNoTag(t *testing.T) {
	var calls atomic.Int64
	rekor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(rekor.Close)
	ro := retry.DefaultOptions()
	ro.Retries = 2
	ro.Sleep = func(context.Context, time.Duration) error { return nil }
	rt, err := retry.New(http.DefaultTransport, ro)
	require.NoError(t, err)
	k, err := sign.GenerateKey()
	require.NoError(t, err)
	s, err := sign.New(sign.Options{Key: k, RekorURL: rekor.URL, Transport: rt})
	require.NoError(t, err)

	host := testkit.Registry(t)
	repo, err := name.NewRepository(host + "/g/rekor-down")
	require.NoError(t, err)
	for _, format := range []publish.SignFormat{publish.SignBundle, publish.SignLegacy, publish.SignLegacyReferrer} {
		calls.Store(0)
		_, err = publish.ToRegistry(context.Background(), []publish.Image{{Repository: repo, Index: testkit.Index(t, 512, 1, signPlatforms[:2]...), Tags: []string{"v1"}}},
			publish.RegistryOptions{Signing: publish.Signing{Signer: NewSigner(s, nil), Format: format}})
		require.Error(t, err, format)
		assert.Contains(t, err.Error(), "503", format)
		assert.EqualValues(t, 3, calls.Load(), "%s: the first attempt and two retries, then no more signing", format)
		tags, err := remote.List(repo)
		require.NoError(t, err)
		assert.Empty(t, tags, "%s: no tag moved", format)
	}
}
