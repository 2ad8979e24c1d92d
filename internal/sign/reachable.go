package sign

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// UnreachableError is a service signing needs that did not answer the
// preflight (Reachable): the transparency log, or keyless, the CA.
type UnreachableError struct {
	// Service is "transparency log" or "certificate authority".
	Service string
	URL     string
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the %s %s does not answer: %v", e.Service, e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Services a Signer reaches, as UnreachableError names them.
const (
	ServiceLog = "transparency log"
	ServiceCA  = "certificate authority"
)

// defaultProbeTimeout bounds Reachable's requests.
const defaultProbeTimeout = 5 * time.Second

// Reachable asks each service the signatures will need (Rekor's log
// info, keyless also Fulcio's configuration) one short GET, at once,
// through rt with no retries, each bounded by timeout (0: 5s): any HTTP
// answer is one. The first failure is an
// *UnreachableError, so a run can stop before it builds anything.
func (s *Signer) Reachable(ctx context.Context, rt http.RoundTripper, timeout time.Duration) error {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if timeout <= 0 {
		timeout = defaultProbeTimeout
	}
	type probe struct{ service, base, path string }
	var probes []probe
	if s.opts.RekorURL != "" {
		probes = append(probes, probe{ServiceLog, s.opts.RekorURL, "/api/v1/log"})
	}
	if s.Keyless() {
		probes = append(probes, probe{ServiceCA, s.opts.FulcioURL, "/api/v2/configuration"})
	}
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			if err := ask(ctx, rt, timeout, strings.TrimSuffix(p.base, "/")+p.path); err != nil {
				errs[i] = &UnreachableError{Service: p.service, URL: p.base, Err: err}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ask GETs u once within timeout. Any HTTP answer will do: the route,
// name and TLS work; a busy service (5xx) is the signing's retries' to
// wait out.
func ask(ctx context.Context, rt http.RoundTripper, timeout time.Duration, u string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded {
			return fmt.Errorf("no answer within %s", timeout)
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return nil
}
