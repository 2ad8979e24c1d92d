package sign

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
)

// AnnotationRekorBundle holds a legacy signature's Rekor entry, as cosign
// writes it: the signed entry timestamp and the entry it signs.
const AnnotationRekorBundle = "dev.sigstore.cosign/bundle"

// rekorBundle is cosign's AnnotationRekorBundle (its bundle.RekorBundle).
type rekorBundle struct {
	SignedEntryTimestamp []byte `json:"SignedEntryTimestamp"`
	Payload              struct {
		Body           string `json:"body"` // base64 of the canonicalized entry
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"` // hex
	} `json:"Payload"`
}

// rekorAnnotation is e as cosign's AnnotationRekorBundle; "" without e.
func rekorAnnotation(e *protorekor.TransparencyLogEntry) (string, error) {
	if e == nil {
		return "", nil
	}
	if e.GetInclusionPromise() == nil {
		return "", errors.New("the log's entry has no signed entry timestamp")
	}
	var rb rekorBundle
	rb.SignedEntryTimestamp = e.GetInclusionPromise().GetSignedEntryTimestamp()
	rb.Payload.Body = base64.StdEncoding.EncodeToString(e.GetCanonicalizedBody())
	rb.Payload.IntegratedTime, rb.Payload.LogIndex = e.GetIntegratedTime(), e.GetLogIndex()
	rb.Payload.LogID = hex.EncodeToString(e.GetLogId().GetKeyId())
	b, err := json.Marshal(rb)
	return string(b), err
}

// tlogEntry reads cosign's AnnotationRekorBundle of a legacy signature
// (a hashedrekord entry) as a bundle's log entry; nil for "".
func tlogEntry(annotation string) (*protorekor.TransparencyLogEntry, error) {
	if annotation == "" {
		return nil, nil
	}
	var rb rekorBundle
	if err := json.Unmarshal([]byte(annotation), &rb); err != nil {
		return nil, fmt.Errorf("%s annotation: %w", AnnotationRekorBundle, err)
	}
	body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
	if err != nil {
		return nil, fmt.Errorf("%s annotation body: %w", AnnotationRekorBundle, err)
	}
	id, err := hex.DecodeString(rb.Payload.LogID)
	if err != nil {
		return nil, fmt.Errorf("%s annotation log ID: %w", AnnotationRekorBundle, err)
	}
	return &protorekor.TransparencyLogEntry{
		LogIndex: rb.Payload.LogIndex, LogId: &protocommon.LogId{KeyId: id},
		KindVersion:    &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.1"},
		IntegratedTime: rb.Payload.IntegratedTime, CanonicalizedBody: body,
		InclusionPromise: &protorekor.InclusionPromise{SignedEntryTimestamp: rb.SignedEntryTimestamp},
	}, nil
}
