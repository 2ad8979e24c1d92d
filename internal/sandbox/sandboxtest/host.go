package sandboxtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Host is what the adversary aims at on the host: a file that must never
// appear, a canary whose contents must never be read, and a listener on
// 127.0.0.1 that must see no connection.
type Host struct {
	File     string
	Canary   string
	Secret   string // the canary's contents
	Listener *net.TCPListener
}

// NewHost makes the targets in test temporary directories.
func NewHost(t testing.TB) *Host {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	h := &Host{
		File:   filepath.Join(t.TempDir(), "watched", "escaped"),
		Canary: filepath.Join(t.TempDir(), "canary"),
		Secret: "canary-" + hex.EncodeToString(b),
	}
	if err := os.Mkdir(filepath.Dir(h.File), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.Canary, []byte(h.Secret), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	h.Listener = ln.(*net.TCPListener)
	return h
}

// Env is the adversary's environment naming the targets.
func (h *Host) Env() []string {
	return []string{"HOST_FILE=" + h.File, "CANARY_FILE=" + h.Canary, "DIAL_ADDR=" + h.Listener.Addr().String()}
}

// Untouched fails t for every attack that reached the host; output is all
// the runs reported. Call it once every run has ended: a connection that
// was made is then waiting to be accepted.
func (h *Host) Untouched(t testing.TB, output string) {
	t.Helper()
	if _, err := os.Lstat(h.File); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists on the host (or cannot be checked: %v)", h.File, err)
	}
	if ents, err := os.ReadDir(filepath.Dir(h.File)); err != nil || len(ents) != 0 {
		t.Errorf("the watched directory %s changed: %d entries, %v", filepath.Dir(h.File), len(ents), err)
	}
	if strings.Contains(output, h.Secret) {
		t.Errorf("the canary's contents reached the output:\n%s", output)
	}
	if err := h.Listener.SetDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := h.Listener.Accept()
	if err == nil {
		c.Close()
		t.Errorf("the listener on %s accepted a connection from %s", h.Listener.Addr(), c.RemoteAddr())
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("accept on %s: %v", h.Listener.Addr(), err)
	}
}
