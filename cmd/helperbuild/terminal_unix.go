//go:build unix

package main

import "golang.org/x/sys/unix"

// isTerminal says whether fd is a terminal: one that has a window size.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	return err == nil
}

// terminalWidth is fd's width in columns; 0 if unknown.
func terminalWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
