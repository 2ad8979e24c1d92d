package progress

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// screen is a terminal as wide as width, enough of one to replay what TTY
// writes: text, \n, \r, ESC[nA (up), ESC[2K (erase line), ESC[J (erase
// below). A line longer than the width wraps, as on a terminal; wrapped
// counts the times it happened.
type screen struct {
	width     int
	height    int // 0: unlimited; else the cursor cannot go above the top of the last height lines
	lines     [][]rune
	row, col  int
	wrapped   int // wraps of a table line (one drawn after ESC[2K)
	maxRowLen int
	inTable   bool
}

func newScreen(width int) *screen { return &screen{width: width, lines: [][]rune{nil}} }

func (s *screen) Write(p []byte) (int, error) {
	str := string(p)
	for len(str) > 0 {
		if strings.HasPrefix(str, "\x1b[") {
			end := strings.IndexAny(str, "AKJ")
			if end < 0 {
				return 0, fmt.Errorf("unknown escape in %q", str)
			}
			arg, cmd := str[2:end], str[end]
			str = str[end+1:]
			switch cmd {
			case 'A':
				n, err := strconv.Atoi(arg)
				if err != nil {
					return 0, err
				}
				top := 0
				if s.height > 0 {
					top = max(0, len(s.lines)-s.height)
				}
				s.row = max(top, s.row-n)
			case 'K':
				s.lines[s.row] = nil
				s.inTable = true
			case 'J':
				s.lines[s.row] = s.lines[s.row][:min(s.col, len(s.lines[s.row]))]
				s.lines = s.lines[:s.row+1]
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(str)
		str = str[size:]
		switch r {
		case '\n':
			s.inTable = false
			s.row++
			s.col = 0
			if s.row == len(s.lines) {
				s.lines = append(s.lines, nil)
			}
		case '\r':
			s.col = 0
		default:
			if s.col == s.width {
				if s.inTable {
					s.wrapped++
				}
				s.row++
				s.col = 0
				if s.row == len(s.lines) {
					s.lines = append(s.lines, nil)
				}
			}
			line := s.lines[s.row]
			for len(line) <= s.col {
				line = append(line, ' ')
			}
			line[s.col] = r
			s.lines[s.row] = line
			s.col++
			if s.inTable {
				s.maxRowLen = max(s.maxRowLen, len(line))
			}
		}
	}
	return len(p), nil
}

// text is what the screen shows, trailing empty lines dropped.
func (s *screen) text() []string {
	var out []string
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
