// Command bigmain is a benchmark workload for helperbuild: a main package
// that links a binary of about 48 MB for linux/amd64 (gitlab-runner size),
// because package app really uses client-go, the AWS SDK (S3),
// go-containerregistry, cobra and golang.org/x/net.
package main

import "example.com/bigmain/app"

// benchRun is set with -ldflags "-X main.benchRun=N" so that every
// benchmark run links a different binary.
var benchRun = "0"

func main() { app.Main(benchRun, 0) }
