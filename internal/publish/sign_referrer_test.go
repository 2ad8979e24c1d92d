package publish

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// The legacy signature in cosign's OCI 1.1 form: listed by the referrers
// API where there is one (no tag but the release's), by the fallback tag
// on a registry without it.
func TestSignLegacyReferrerListed(t *testing.T) {
	api := testkit.ReferrersRegistry(t)
	_, plain := startRegistry(t)
	for name, host := range map[string]string{"referrers API": api, "fallback tag": plain} {
		t.Run(name, func(t *testing.T) {
			idx, digests := testIndex(t)
			repo := mustRepo(t, host+"/g/helper")
			res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(&fakeSigner{}, SignLegacyReferrer))
			require.NoError(t, err)
			subjects := append([]v1.Hash{mustDigest(t, idx)}, digests...)
			require.Len(t, res.Signatures, len(subjects))
			for i, s := range res.Signatures {
				assert.Equal(t, subjects[i], s.Subject)
				assert.Equal(t, SignLegacyReferrer, s.Format)
				assert.Empty(t, s.Tag)
				assert.Equal(t, []v1.Hash{s.Digest}, referrerDigests(t, repo.Digest(s.Subject.String())))
			}
			var want []string
			if host == plain {
				for _, s := range subjects {
					want = append(want, FallbackTag(s))
				}
			}
			want = append(want, "v1")
			slices.Sort(want)
			assert.Equal(t, want, tags(t, repo), "no .sig tag; fallback tags only without the API")
			assert.Equal(t, repo.Tag("v1").String(), res.Written[len(res.Written)-1], "the release's tag last")
		})
	}
}

// On a registry that resolves sha256-<hex> to the subject (GitLab's), the
// OCI 1.1 form goes by digest alone, no fallback tag, and the .sig tag
// with the same signature is written for verifiers that cannot list it.
func TestSignLegacyReferrerWhereTheFallbackTagIsTheSubject(t *testing.T) {
	host := testkit.Registry(t, testkit.ResolvesDigestTags)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, signOpts(&fakeSigner{}, SignLegacyReferrer))
	require.NoError(t, err)
	subjects := append([]v1.Hash{mustDigest(t, idx)}, digests...)
	require.Len(t, res.Signatures, 2*len(subjects), "per subject the referrer and the .sig image")
	for i, s := range subjects {
		r, l := res.Signatures[2*i], res.Signatures[2*i+1]
		assert.Equal(t, s, r.Subject)
		assert.Equal(t, SignLegacyReferrer, r.Format)
		m, err := remote.Get(repo.Digest(r.Digest.String()))
		require.NoError(t, err, "the referrer is in the registry by digest")
		assert.Contains(t, string(m.Manifest), `"subject"`)
		assert.Equal(t, SignLegacy, l.Format)
		assert.Equal(t, s.Algorithm+"-"+s.Hex+".sig", l.Tag)
	}
	for _, tag := range tags(t, repo) {
		assert.True(t, tag == "v1" || strings.HasSuffix(tag, ".sig"), "no fallback tag: %s", tag)
	}
}
