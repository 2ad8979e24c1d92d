package attest

import (
	"bytes"
	"encoding/json"
)

// marshal encodes v compactly with encoding/json, without escaping <, >
// and & (purls hold "&"), and without a trailing newline. Struct fields come
// out in declaration order and map keys sorted, so equal values always give
// equal bytes.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
