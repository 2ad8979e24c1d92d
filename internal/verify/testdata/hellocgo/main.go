// Command hellocgo is hello built with cgo, so it links dynamically against
// the host's libc.
package main

// #include <stdlib.h>
import "C"

import "fmt"

func main() {
	fmt.Println(C.abs(-1))
}
