package testkit

import (
	"bytes"
	_ "embed"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// spdxSchema is the SPDX project's JSON schema of SPDX 2.3 documents, as
// published (testdata/spdx-2.3/README.md names its source and hash).
//
//go:embed testdata/spdx-2.3/spdx-schema.json
var spdxSchema []byte

// spdxSchemaURL is the schema's $id.
const spdxSchemaURL = "http://spdx.org/rdf/terms/2.3"

// SPDXSchemaError validates doc, an SPDX 2.3 document in JSON, against the
// SPDX project's JSON schema (santhosh-tekuri/jsonschema, draft-07 as the
// schema declares, formats asserted): nil when it conforms, else the
// validator's error, which lists every violation by JSON pointer.
func SPDXSchemaError(doc []byte) error {
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spdxSchema))
	if err != nil {
		return fmt.Errorf("the vendored SPDX schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(spdxSchemaURL, schemaDoc); err != nil {
		return fmt.Errorf("the vendored SPDX schema: %w", err)
	}
	sch, err := c.Compile(spdxSchemaURL)
	if err != nil {
		return fmt.Errorf("the vendored SPDX schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("the SPDX document is no JSON: %w", err)
	}
	return sch.Validate(v)
}

// SPDXSchemaValid fails t unless doc conforms to the SPDX 2.3 JSON schema
// (SPDXSchemaError).
func SPDXSchemaValid(t testing.TB, doc []byte) {
	t.Helper()
	if err := SPDXSchemaError(doc); err != nil {
		t.Fatalf("the SBOM does not conform to the SPDX 2.3 JSON schema: %v", err)
	}
}
