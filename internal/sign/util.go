package sign

import (
	"encoding/base64"
	"encoding/pem"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func derToPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// parseDigest is image@subject as a reference; image is a repository.
func parseDigest(image string, subject v1.Hash) (name.Digest, error) {
	return name.NewDigest(image+"@"+subject.String(), name.WeakValidation)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
