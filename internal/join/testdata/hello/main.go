// hello is the test binary the join tests put into per-architecture images.
package main

import (
	"fmt"
	"runtime"
)

func main() { fmt.Printf("OS/Arch: %s/%s\n", runtime.GOOS, runtime.GOARCH) }
