package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/verify"
)

// decodeVerifyJSON reads verify's JSON strictly into its one type (a field
// verify.Document does not know fails the test) and checks the schema
// version and the reference.
func decodeVerifyJSON(t *testing.T, data []byte, ref string) verify.ImageJSON {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc verify.Document
	require.NoError(t, dec.Decode(&doc), string(data))
	assert.Equal(t, 1, doc.SchemaVersion)
	require.Len(t, doc.Images, 1, string(data))
	assert.Equal(t, ref, doc.Images[0].Reference)
	return doc.Images[0]
}

// TestVerifyJSONEveryMode: every mode of verify (files, --run,
// --attestations, --signature, --nodes) prints one JSON shape with
// --format json, with schemaVersion, and writes the same bytes to
// --metadata-file; each mode's own check is in it.
func TestVerifyJSONEveryMode(t *testing.T) {
	helloModule(t)
	keys := t.TempDir()
	priv, pub := keyPair(t, keys, "pw")
	host, _ := startRegistry(t)
	ref := host + "/group/hello:v1"
	code, _, stderr := run(t, baseEnv("COSIGN_PASSWORD=pw"), "push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit,
		"--sign", "--sign-key", priv, "--sign-tlog", "none", "--tag", ref, "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	nodes := filepath.Join(t.TempDir(), "nodes.json")
	require.NoError(t, os.WriteFile(nodes, []byte(`{"items":[{"metadata":{"name":"n1","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}}},{"metadata":{"name":"n2","labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"riscv64"}}}]}`), 0o644))

	for _, tc := range []struct {
		mode  string
		args  []string
		check string // the mode's check, in some platform's checks or findings
	}{
		{"files", nil, verify.CheckArch},
		{"run", []string{"--run"}, verify.CheckRun},
		{"attestations", []string{"--attestations"}, verify.CheckAttest},
		{"signature", []string{"--signature", "--key", pub}, verify.CheckSignature},
		{"nodes", []string{"--nodes", nodes}, verify.CheckNodes}, // n2, riscv64, has no image
	} {
		t.Run(tc.mode, func(t *testing.T) {
			meta := filepath.Join(t.TempDir(), "verify.json")
			args := append(append([]string{"verify", "--format", "json", "--metadata-file", meta, "--platforms", "linux/amd64"}, tc.args...), ref)
			code, stdout, stderr := run(t, baseEnv(), args...)
			img := decodeVerifyJSON(t, []byte(stdout), ref)
			assert.Equal(t, img.OK, code == 0, "exit %d, stderr:\n%s", code, stderr)
			file, err := os.ReadFile(meta)
			require.NoError(t, err)
			assert.Equal(t, stdout, string(file), "--format json and --metadata-file are one document")
			require.Len(t, img.Platforms, 1)
			var names []string
			for _, c := range img.Platforms[0].Checks {
				names = append(names, c.Name)
			}
			for _, f := range img.Findings {
				names = append(names, f.Check)
			}
			assert.Contains(t, names, tc.check, stdout)
		})
	}
}
