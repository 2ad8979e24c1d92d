package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/release"
)

// progressFlags are --progress and -v: how a run shows what it does on
// stderr. build, push and merge take them the same way (register,
// validate, open).
type progressFlags struct {
	mode    string
	verbose bool
}

// register adds the flags to cmd, with --progress's completion, so every
// command that has the flag completes it.
func (f *progressFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "progress", "auto", "how to show progress on stderr: auto (tty on a terminal, else plain), tty, plain, json or quiet (errors and the summary only)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show every detail as well: each layer, check, upload and tag, with full digests and paths")
	_ = cmd.RegisterFlagCompletionFunc("progress", completeProgress)
}

func (f *progressFlags) validate() error {
	for _, m := range progress.Modes {
		if f.mode == m {
			return nil
		}
	}
	return usagef("--progress %q: want auto, tty, plain, json or quiet", f.mode)
}

// runProgress is one run's reporter and the loggers that feed it.
type runProgress struct {
	rep   *progress.Reporter
	log   *slog.Logger // details (with -v) and warnings
	retry *slog.Logger // the retry transport's warnings
	stop  chan struct{}
	done  chan struct{}
}

// openProgress chooses the renderer for stderr and starts the TTY's
// redraw ticker; close must be called with the run's outcome.
func openProgress(f progressFlags, stderr io.Writer, env Env) *runProgress {
	mode := f.mode
	size := func() (int, int) { return 0, 0 }
	if fd, ok := terminalFd(stderr); ok {
		size = func() (int, int) { return terminalSize(fd) }
		if mode == "auto" {
			mode = "tty"
		}
	}
	r := progress.ForMode(mode, stderr, size, env.Get("GITLAB_CI") == "true")
	p := &runProgress{rep: progress.NewReporter(r, time.Now)}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	p.log = slog.New(progress.LogHandler(p.rep, progress.KindLog, level, progress.RedactAttr))
	p.retry = slog.New(progress.LogHandler(p.rep, progress.KindRetry, level, progress.RedactAttr)) // each retry with -v
	if mode == "tty" {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.tick()
	}
	return p
}

// tick redraws the table's times while the run goes on.
func (p *runProgress) tick() {
	defer close(p.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.rep.Tick()
		}
	}
}

// close stops the ticker and shows the final state.
func (p *runProgress) close(err error) {
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	p.rep.Close(err)
}

// observer is what the run reports to.
func (p *runProgress) observer() release.Observer {
	return release.Observer{Logger: p.log, RetryLogger: p.retry, Progress: p.rep}
}

// terminalFd is w's file descriptor when w is a terminal.
func terminalFd(w io.Writer) (uintptr, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	return f.Fd(), isTerminal(f.Fd())
}
