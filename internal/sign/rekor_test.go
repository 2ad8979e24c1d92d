package sign

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/strfmt"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/rekor/pkg/types"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rekor is a Rekor v1 stand-in: it answers the create-entry call as
// Rekor does, with the proposed entry canonicalized (rekor's own types,
// which check the entry's signature), a signed entry timestamp and an
// inclusion proof in a one-leaf tree, signed by the log key of a
// sigstore-go VirtualSigstore (its RekorLogs go into the trusted root).
type rekor struct {
	vs    *ca.VirtualSigstore
	calls atomic.Int64
	down  atomic.Bool
}

func newRekor(t *testing.T) (*rekor, *httptest.Server) {
	vs, err := ca.NewVirtualSigstore()
	require.NoError(t, err)
	r := &rekor{vs: vs}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *rekor) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.calls.Add(1)
	if r.down.Load() {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	if req.Method != http.MethodPost || req.URL.Path != "/api/v1/log/entries" {
		http.Error(w, "not a create-entry call", http.StatusNotFound)
		return
	}
	entry, uuid, err := r.enter(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", uuid)
	w.Header().Set("Location", "/api/v1/log/entries/"+uuid)
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(models.LogEntry{uuid: entry})
}

// enter makes the log entry of the proposed entry in req.
func (r *rekor) enter(req *http.Request) (models.LogEntryAnon, string, error) {
	pe, err := models.UnmarshalProposedEntry(req.Body, runtime.JSONConsumer())
	if err != nil {
		return models.LogEntryAnon{}, "", err
	}
	impl, err := types.CreateVersionedEntry(pe)
	if err != nil {
		return models.LogEntryAnon{}, "", err
	}
	body, err := impl.Canonicalize(req.Context())
	if err != nil {
		return models.LogEntryAnon{}, "", err
	}
	logID, err := r.vs.RekorLogID()
	if err != nil {
		return models.LogEntryAnon{}, "", err
	}
	integrated, index := time.Now().Unix(), int64(0)
	set, err := r.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(body), IntegratedTime: integrated, LogIndex: index, LogID: logID})
	if err != nil {
		return models.LogEntryAnon{}, "", err
	}
	proof, err := r.vs.GetInclusionProof(body)
	if err != nil {
		return models.LogEntryAnon{}, "", err
	}
	leaf := sha256.Sum256(append([]byte{0}, body...))
	return models.LogEntryAnon{
		Body: base64.StdEncoding.EncodeToString(body), IntegratedTime: &integrated, LogID: &logID, LogIndex: &index,
		Verification: &models.LogEntryAnonVerification{SignedEntryTimestamp: strfmt.Base64(set), InclusionProof: proof},
	}, hex.EncodeToString(leaf[:]), nil
}

// trustedRootWithLog names f's CA and r's log, as trusted_root.json.
func trustedRootWithLog(t *testing.T, f *fulcio, r *rekor) []byte {
	logs := map[string]*root.TransparencyLog{}
	for id, l := range r.vs.RekorLogs() {
		// The VirtualSigstore's log ID is the hex text itself: a
		// trusted_root.json carries the raw key ID.
		raw, err := hex.DecodeString(id)
		require.NoError(t, err)
		cp := *l
		cp.ID = raw
		logs[id] = &cp
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{&root.FulcioCertificateAuthority{
		Root: f.root, Intermediates: []*x509.Certificate{f.inter}, ValidityPeriodStart: time.Now().Add(-time.Hour), URI: "https://fulcio.example.test",
	}}, nil, nil, logs)
	require.NoError(t, err)
	b, err := tr.MarshalJSON()
	require.NoError(t, err)
	return b
}

// TestKeylessWithRekor: keyless signing enters each signature in the log
// and records the entry in the bundle; verify accepts it with a trusted
// root naming that log, without --insecure-ignore-tlog, and refuses it
// with a root that does not name the log.
func TestKeylessWithRekor(t *testing.T) {
	iss := newIssuer(t)
	f, fsrv := newFulcio(t, iss)
	r, rsrv := newRekor(t)
	s, err := New(Options{IDToken: iss.token(t, testIdentity, time.Now().Add(time.Hour)), FulcioURL: fsrv.URL, RekorURL: rsrv.URL, Transport: noWaitRetries(t, 2)})
	require.NoError(t, err)
	b, err := s.Bundle(context.Background(), subject)
	require.NoError(t, err)
	assert.EqualValues(t, 1, r.calls.Load(), "one entry for one signature")

	var parsed struct {
		VerificationMaterial struct {
			TlogEntries []struct {
				LogIndex         string `json:"logIndex"`
				InclusionPromise struct {
					SignedEntryTimestamp string `json:"signedEntryTimestamp"`
				} `json:"inclusionPromise"`
				KindVersion struct{ Kind string } `json:"kindVersion"`
			} `json:"tlogEntries"`
		} `json:"verificationMaterial"`
	}
	require.NoError(t, json.Unmarshal(b, &parsed))
	require.Len(t, parsed.VerificationMaterial.TlogEntries, 1, "the bundle records the entry:\n%s", b)
	e := parsed.VerificationMaterial.TlogEntries[0]
	assert.Equal(t, "dsse", e.KindVersion.Kind)
	assert.NotEmpty(t, e.InclusionPromise.SignedEntryTimestamp)

	v, err := NewVerifier(Policy{Identity: testIdentity, Issuer: testIssuer, TrustedRoot: trustedRootWithLog(t, f, r)})
	require.NoError(t, err)
	assert.NoError(t, v.VerifyBundle(b, subject), "the log's entry vouches for the signature's time")
	v, err = NewVerifier(Policy{Identity: testIdentity, Issuer: "https://other.example.test", TrustedRoot: trustedRootWithLog(t, f, r)})
	require.NoError(t, err)
	assert.Error(t, v.VerifyBundle(b, subject), "another issuer")

	otherLog, _ := newRekor(t)
	v, err = NewVerifier(Policy{Identity: testIdentity, Issuer: testIssuer, TrustedRoot: trustedRootWithLog(t, f, otherLog)})
	require.NoError(t, err)
	assert.ErrorContains(t, v.VerifyBundle(b, subject), "log", "a root naming another log does not vouch for the entry")
}

// TestRekorDown: a log that answers 503 is retried (the run's transport),
// then signing fails naming the host and the status.
func TestRekorDown(t *testing.T) {
	r, rsrv := newRekor(t)
	r.down.Store(true)
	k, err := GenerateKey()
	require.NoError(t, err)
	s, err := New(Options{Key: k, RekorURL: rsrv.URL, Transport: noWaitRetries(t, 3)})
	require.NoError(t, err)
	_, err = s.Bundle(context.Background(), subject)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), rsrv.Listener.Addr().String())
	assert.EqualValues(t, 4, r.calls.Load(), "the first attempt and three retries")

	_, err = New(Options{Key: k, RekorURL: "rekor.example.test"})
	assert.ErrorContains(t, err, "want https://HOST")
}

// TestKeylessLegacyWithRekor: a legacy signature carries its log entry
// as cosign's dev.sigstore.cosign/bundle annotation, and verify accepts
// it by that entry, without --insecure-ignore-tlog; a root naming another
// log, or the annotation dropped, is refused.
func TestKeylessLegacyWithRekor(t *testing.T) {
	iss := newIssuer(t)
	f, fsrv := newFulcio(t, iss)
	r, rsrv := newRekor(t)
	s, err := New(Options{IDToken: iss.token(t, testIdentity, time.Now().Add(time.Hour)), FulcioURL: fsrv.URL, RekorURL: rsrv.URL, Transport: noWaitRetries(t, 2)})
	require.NoError(t, err)
	l, err := s.Legacy(context.Background(), "registry.example.test/group/helper", subject)
	require.NoError(t, err)
	require.NotEmpty(t, l.RekorBundle, "the entry is recorded")
	ann := legacyAnnotations(l)
	assert.Equal(t, l.RekorBundle, ann[AnnotationRekorBundle])

	v, err := NewVerifier(Policy{Identity: testIdentity, Issuer: testIssuer, TrustedRoot: trustedRootWithLog(t, f, r)})
	require.NoError(t, err)
	assert.NoError(t, v.VerifyLegacyLayer(l.Payload, ann, subject))
	without := map[string]string{AnnotationSignature: ann[AnnotationSignature], AnnotationCertificate: ann[AnnotationCertificate]}
	assert.Error(t, v.VerifyLegacyLayer(l.Payload, without, subject), "without the entry nothing vouches for the signing time")

	otherLog, _ := newRekor(t)
	v, err = NewVerifier(Policy{Identity: testIdentity, Issuer: testIssuer, TrustedRoot: trustedRootWithLog(t, f, otherLog)})
	require.NoError(t, err)
	assert.Error(t, v.VerifyLegacyLayer(l.Payload, ann, subject), "a root naming another log")
}
