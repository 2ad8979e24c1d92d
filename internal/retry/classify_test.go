package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestErrReason(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
		ok     bool
	}{
		{fmt.Errorf("write tcp: %w", syscall.ECONNRESET), "connection reset", true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "connection refused", true},
		{fmt.Errorf("write: %w", syscall.EPIPE), "broken pipe", true},
		{&net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}, "connection closed", true},
		{io.ErrUnexpectedEOF, "unexpected EOF", true},
		{errTimeout, "timeout", true},
		{context.Canceled, "", false},
		{errors.New("x509: certificate signed by unknown authority"), "", false},
	} {
		reason, ok := errReason(tc.err)
		assert.Equal(t, tc.ok, ok, "%v", tc.err)
		assert.Equal(t, tc.reason, reason, "%v", tc.err)
	}
}
