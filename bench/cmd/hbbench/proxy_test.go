package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSleepCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if !sleepCtx(ctx, 0) || !sleepCtx(ctx, time.Millisecond) {
		t.Fatal("a live context's wait did not pass")
	}
	cancel()
	if sleepCtx(ctx, time.Hour) || sleepCtx(ctx, 0) {
		t.Fatal("a cancelled context's wait passed")
	}
}

// TestProxyDelay: a delayed request is forwarded; one whose client gives up
// during the delay never reaches the registry, and the proxy stops.
func TestProxyDelay(t *testing.T) {
	var hits atomic.Int64
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	defer reg.Close()
	target := strings.TrimPrefix(reg.URL, "http://")

	p, err := startProxy(target, nil, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + p.Addr + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p.Stop()
	if resp.StatusCode != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("delayed request: status %d, %d hits, want 200 and 1", resp.StatusCode, hits.Load())
	}

	p, err = startProxy(target, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.Addr+"/v2/", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for p.snapshot().Requests == 0 { // the proxy holds it now
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a request cancelled during the delay succeeded")
	}
	p.Stop()
	if hits.Load() != 1 {
		t.Fatalf("the cancelled request reached the registry (%d hits)", hits.Load())
	}
}

func TestFactsMentionRegistryDelay(t *testing.T) {
	for _, d := range []time.Duration{0, 30 * time.Millisecond} {
		var sb strings.Builder
		(&bench{cfg: &config{registryDelay: d}}).writeFacts(&sb)
		if got := strings.Contains(sb.String(), "holds every request 30ms"); got != (d > 0) {
			t.Errorf("-registry-delay %s: facts mention it: %v\n%s", d, got, sb.String())
		}
	}
}
