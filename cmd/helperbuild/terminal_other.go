//go:build !unix

package main

// isTerminal is false where helperbuild cannot ask: plain output.
func isTerminal(uintptr) bool { return false }

func terminalSize(uintptr) (cols, rows int) { return 0, 0 }
