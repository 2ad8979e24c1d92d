package sign

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key's signature needs a transparency log entry unless IgnoreTlog, as
// cosign's verify --key needs --insecure-ignore-tlog: without an entry it
// is refused naming the flag and what it gives up; an entry is checked
// against the trusted root's logs, and without a root it cannot be, which
// is said too. Bundles and legacy signatures alike.
func TestKeySignatureNeedsTlog(t *testing.T) {
	priv, pub := cosignKey(t, "s3cret")
	k, err := LoadKey(priv, []byte("s3cret"))
	require.NoError(t, err)
	r, rsrv := newRekor(t)
	f, _ := newFulcio(t, newIssuer(t))
	withLog, err := New(Options{Key: k, RekorURL: rsrv.URL, Transport: noWaitRetries(t, 0)})
	require.NoError(t, err)
	noLog, err := New(Options{Key: k})
	require.NoError(t, err)
	ctx := context.Background()

	type sig struct {
		verify func(*Verifier) error
	}
	sigs := map[string]sig{}
	for name, s := range map[string]*Signer{"log": withLog, "no log": noLog} {
		b, err := s.Bundle(ctx, subject)
		require.NoError(t, err)
		l, err := s.Legacy(ctx, "registry.example.test/group/helper", subject)
		require.NoError(t, err)
		sigs["bundle, "+name] = sig{func(v *Verifier) error { return v.VerifyBundle(b, subject) }}
		sigs["legacy, "+name] = sig{func(v *Verifier) error { return v.VerifyLegacyLayer(l.Payload, legacyAnnotations(l), subject) }}
	}
	otherLog, _ := newRekor(t)
	policies := map[string]Policy{
		"key":                        {PublicKeyPEM: pub},
		"key, ignore tlog":           {PublicKeyPEM: pub, IgnoreTlog: true},
		"key, the log's root":        {PublicKeyPEM: pub, TrustedRoot: trustedRootWithLog(t, f, r)},
		"key, another log's root":    {PublicKeyPEM: pub, TrustedRoot: trustedRootWithLog(t, f, otherLog)},
		"key, ignore tlog, any root": {PublicKeyPEM: pub, IgnoreTlog: true, TrustedRoot: trustedRootWithLog(t, f, otherLog)},
	}
	// want: "" accepted, else a substring of the refusal.
	want := map[string]map[string]string{
		"key": {"bundle, no log": "--insecure-ignore-tlog", "legacy, no log": "--insecure-ignore-tlog",
			"bundle, log": "--trusted-root", "legacy, log": "--trusted-root"},
		"key, ignore tlog":           {"bundle, no log": "", "legacy, no log": "", "bundle, log": "", "legacy, log": ""},
		"key, the log's root":        {"bundle, no log": "--insecure-ignore-tlog", "legacy, no log": "--insecure-ignore-tlog", "bundle, log": "", "legacy, log": ""},
		"key, another log's root":    {"bundle, no log": "--insecure-ignore-tlog", "legacy, no log": "--insecure-ignore-tlog", "bundle, log": "log", "legacy, log": "log"},
		"key, ignore tlog, any root": {"bundle, no log": "", "legacy, no log": "", "bundle, log": "", "legacy, log": ""},
	}
	for pn, p := range policies {
		v, err := NewVerifier(p)
		require.NoError(t, err, pn)
		for sn, s := range sigs {
			err := s.verify(v)
			if w := want[pn][sn]; w == "" {
				assert.NoError(t, err, "%s: %s", pn, sn)
			} else {
				assert.ErrorContains(t, err, w, "%s: %s", pn, sn)
			}
		}
	}
	v, err := NewVerifier(policies["key"])
	require.NoError(t, err)
	b, err := noLog.Bundle(ctx, subject)
	require.NoError(t, err)
	assert.EqualError(t, v.VerifyBundle(b, subject), errNoTlog.Error())
	for _, says := range []string{"nothing proves when it was signed", "leaked key", "Kyverno", "policy-controller", "ignoreTlog", "--insecure-ignore-tlog"} {
		assert.Contains(t, errNoTlog.Error(), says)
	}
}
