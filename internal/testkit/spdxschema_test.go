package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The embedded schema is the published file the README names, unmodified.
func TestSPDXSchemaIsThePublishedOne(t *testing.T) {
	sum := sha256.Sum256(spdxSchema)
	readme, err := os.ReadFile("testdata/spdx-2.3/README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "`"+hex.EncodeToString(sum[:])+"`")
	assert.Equal(t, "239208b7ac287b3cf5d9a9af23f9d69863971102a5e1587a27a398b43490b89b", hex.EncodeToString(sum[:]))
}

// A minimal document passes; one without what the schema requires, or
// that is no JSON, fails.
func TestSPDXSchemaError(t *testing.T) {
	const ok = `{"spdxVersion":"SPDX-2.3","dataLicense":"CC0-1.0","SPDXID":"SPDXRef-DOCUMENT","name":"x",
		"documentNamespace":"https://example.com/x","creationInfo":{"created":"2025-01-01T00:00:00Z","creators":["Tool: x"]},
		"packages":[{"SPDXID":"SPDXRef-a","name":"a","downloadLocation":"NOASSERTION"}]}`
	require.NoError(t, SPDXSchemaError([]byte(ok)))
	err := SPDXSchemaError([]byte(strings.Replace(ok, `"downloadLocation":"NOASSERTION"`, `"downloadLocation":1`, 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/packages/0/downloadLocation")
	require.Error(t, SPDXSchemaError([]byte(strings.Replace(ok, `"dataLicense":"CC0-1.0",`, "", 1))))
	require.ErrorContains(t, SPDXSchemaError([]byte("{")), "no JSON")
}
