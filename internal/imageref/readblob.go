package imageref

import (
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ReadBlob is the stored (compressed) bytes of l, read whole when they are
// at most limit bytes: a blob a registry sends more of is refused rather
// than cut, so what a caller parses is never a truncated prefix. For the
// small blobs read into memory (signatures, in-toto statements).
func ReadBlob(l v1.Layer, limit int64) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
