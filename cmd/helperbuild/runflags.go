package main

import (
	"time"

	"github.com/spf13/pflag"
)

// runLimitFlags bound what verify --run unpacks and how long a program runs,
// and what every check of verify decompresses.
type runLimitFlags struct {
	timeout       time.Duration
	maxSize       byteSize
	layersMaxSize byteSize
}

func (f *runLimitFlags) register(fl *pflag.FlagSet) {
	f.maxSize = 4 << 30
	f.layersMaxSize = 8 << 30
	fl.DurationVar(&f.timeout, "run-timeout", 30*time.Second, "with --run: stop a program (and all it started) after this long")
	fl.Var(&f.maxSize, "run-max-size", "with --run: the most a platform's filesystem may unpack to, e.g. 4GiB; a larger image fails the run check")
	fl.Var(&f.layersMaxSize, "max-layers-size", "the most a platform's layers may decompress to, e.g. 8GiB; more fails the arch check and nothing of the files is checked")
}

func (f *runLimitFlags) validate() error {
	if f.timeout <= 0 {
		return usagef("--run-timeout %s: want a positive duration, e.g. 30s", f.timeout)
	}
	return nil
}
