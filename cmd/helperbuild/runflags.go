package main

import (
	"time"

	"github.com/spf13/pflag"
)

// runLimitFlags bound what verify --run unpacks and how long a program runs.
type runLimitFlags struct {
	timeout time.Duration
	maxSize byteSize
}

func (f *runLimitFlags) register(fl *pflag.FlagSet) {
	f.maxSize = 4 << 30
	fl.DurationVar(&f.timeout, "run-timeout", 30*time.Second, "with --run: stop a program (and all it started) after this long")
	fl.Var(&f.maxSize, "run-max-size", "the most a platform's layers may decompress to (a larger image fails the arch check) and, with --run, its filesystem unpack to (fails the run check), e.g. 4GiB")
}

func (f *runLimitFlags) validate() error {
	if f.timeout <= 0 {
		return usagef("--run-timeout %s: want a positive duration, e.g. 30s", f.timeout)
	}
	return nil
}
