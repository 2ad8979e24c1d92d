package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/helperbuild/helperbuild/internal/sandbox"
)

func main() {
	// A re-executed helperbuild that is a sandbox's init (verify --run)
	// does only that.
	if code, ok := sandbox.Init(os.Args); ok {
		os.Exit(code)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Stop(sigs) // a second signal ends the process at once
		cancel(signalCause{sig})
	}()
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ())
	cancel(nil)
	os.Exit(code)
}

// signalCause cancels a run on a signal; Run exits 128+signal for it
// (130 for SIGINT, 143 for SIGTERM).
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string     { return "interrupted by " + s.sig.String() }
func (s signalCause) Signal() os.Signal { return s.sig }
