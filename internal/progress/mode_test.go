package progress

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestForMode: each mode gets its renderer; auto (unresolved) and anything
// else is plain.
func TestForMode(t *testing.T) {
	size := func() (int, int) { return 80, 24 }
	assert.IsType(t, &TTY{}, ForMode("tty", io.Discard, size, false))
	assert.IsType(t, &JSON{}, ForMode("json", io.Discard, size, false))
	assert.IsType(t, &Quiet{}, ForMode("quiet", io.Discard, size, false))
	assert.IsType(t, &Plain{}, ForMode("plain", io.Discard, size, true))
	assert.IsType(t, &Plain{}, ForMode("auto", io.Discard, size, false))
}
