package verify

import (
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// readBudget bounds the first pass over a platform's layers, the one that
// decompresses every layer a check needs and builds the metadata tree from
// its headers: the bytes of the uncompressed tars together, and their
// entries. Later passes read the same layers (content-addressed, so the
// same bytes), so they are bounded by the first one.
type readBudget struct {
	maxBytes, bytes     int64
	maxEntries, entries int
}

func newReadBudget(opts Options) *readBudget {
	return &readBudget{maxBytes: opts.LayersMaxBytes, maxEntries: opts.LayersMaxEntries}
}

// layersTooBigError is a platform whose layers decompress to more than the
// budget; reading stopped there.
type layersTooBigError struct {
	entries  bool // over the entries (else the bytes)
	maxBytes int64
	max      int
}

func (e *layersTooBigError) Error() string {
	if e.entries {
		return fmt.Sprintf("the image's layers hold more than %d files, directories and links, the most allowed", e.max)
	}
	return fmt.Sprintf("the image's layers decompress to more than the %s allowed (--max-layers-size)", formatBytes(e.maxBytes))
}

// entry counts one tar header.
func (b *readBudget) entry() error {
	if b == nil {
		return nil
	}
	b.entries++
	if b.entries > b.maxEntries {
		return &layersTooBigError{entries: true, max: b.maxEntries}
	}
	return nil
}

// bound returns layers whose uncompressed streams count against b and fail
// once it is spent; nil b returns layers as they are.
func (b *readBudget) bound(layers []v1.Layer) []v1.Layer {
	if b == nil {
		return layers
	}
	out := make([]v1.Layer, len(layers))
	for i, l := range layers {
		out[i] = boundedLayer{Layer: l, budget: b}
	}
	return out
}

// boundedLayer is a layer whose uncompressed stream counts against a
// readBudget.
type boundedLayer struct {
	v1.Layer
	budget *readBudget
}

var _ v1.Layer = boundedLayer{}

func (l boundedLayer) Uncompressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Uncompressed()
	if err != nil {
		return nil, err
	}
	return &budgetReader{ReadCloser: rc, budget: l.budget}, nil
}

// budgetReader fails a read that takes the budget's bytes past its maximum;
// it never hands out a byte beyond it.
type budgetReader struct {
	io.ReadCloser
	budget *readBudget
}

func (r *budgetReader) Read(p []byte) (int, error) {
	left := r.budget.maxBytes - r.budget.bytes
	if left <= 0 {
		// One more byte says whether the stream is over the budget or
		// merely ends exactly at it.
		var one [1]byte
		n, err := r.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, &layersTooBigError{maxBytes: r.budget.maxBytes}
		}
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.ReadCloser.Read(p)
	r.budget.bytes += int64(n)
	return n, err
}
