// Command huge is bigmain plus an embedded blob of incompressible bytes that
// the benchmark generates (blob.bin, not committed), so the binary is about
// 120 MB: the workload for "peak memory does not grow with binary size".
package main

import (
	_ "embed"

	"example.com/bigmain/app"
)

//go:embed blob.bin
var blob []byte

// benchRun is set with -ldflags "-X main.benchRun=N".
var benchRun = "0"

func main() { app.Main(benchRun, len(blob)) }
