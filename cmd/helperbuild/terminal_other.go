//go:build !unix

package main

// isTerminal is false where helperbuild cannot ask: plain output.
func isTerminal(uintptr) bool { return false }

func terminalWidth(uintptr) int { return 0 }
