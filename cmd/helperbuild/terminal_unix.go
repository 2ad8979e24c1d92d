//go:build unix

package main

import "golang.org/x/sys/unix"

// isTerminal says whether fd is a terminal: one that has a window size.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	return err == nil
}

// terminalSize is fd's size in columns and rows; 0, 0 if unknown.
func terminalSize(fd uintptr) (cols, rows int) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
