package attest

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
)

// In-toto and predicate type URIs.
const (
	// StatementType is the in-toto Statement v1 _type.
	StatementType = "https://in-toto.io/Statement/v1"
)

// Statement is one encoded in-toto Statement v1 about a platform image.
type Statement struct {
	// PredicateType is the statement's predicateType (attestspec.PredicateSPDX,
	// attestspec.PredicateSLSA).
	PredicateType string
	// JSON is the statement as written: compact encoding/json output,
	// byte-identical for equal inputs.
	JSON []byte
}

// Digest is the SHA-256 of the statement's bytes.
func (s Statement) Digest() v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(s.JSON))
	return h
}

// statement is an in-toto Statement v1.
type statement struct {
	Type          string               `json:"_type"`
	Subject       []resourceDescriptor `json:"subject"`
	PredicateType string               `json:"predicateType"`
	Predicate     json.RawMessage      `json:"predicate"`
}

// resourceDescriptor is an in-toto ResourceDescriptor.
type resourceDescriptor struct {
	URI         string            `json:"uri,omitempty"`
	Digest      map[string]string `json:"digest,omitempty"`
	Name        string            `json:"name,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// newStatement wraps the encoded predicate in a statement about im.
func newStatement(im Image, predicateType string, predicate []byte) (Statement, error) {
	b, err := marshal(statement{
		Type:          StatementType,
		Subject:       []resourceDescriptor{im.subject()},
		PredicateType: predicateType,
		Predicate:     predicate,
	})
	if err != nil {
		return Statement{}, fmt.Errorf("statement about %s: %w", im.Manifest.Digest, err)
	}
	return Statement{PredicateType: predicateType, JSON: b}, nil
}

// SBOMStatement wraps an SPDX document (SBOM's output for the same image)
// in an in-toto statement whose subject is the image's platform manifest.
func SBOMStatement(im Image, spdxJSON []byte) (Statement, error) {
	if err := im.check(); err != nil {
		return Statement{}, err
	}
	if !json.Valid(spdxJSON) {
		return Statement{}, fmt.Errorf("SBOM of %s: not JSON", im.Manifest.Digest)
	}
	return newStatement(im, attestspec.PredicateSPDX, spdxJSON)
}
