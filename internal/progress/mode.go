package progress

import "io"

// Modes are the renderers' names, as buildx's --progress names them;
// "auto" is the caller's to resolve (tty on a terminal, else plain).
var Modes = []string{"auto", "tty", "plain", "json", "quiet"}

// ForMode is the renderer mode names, writing to w: TTY (size is the
// terminal's), JSON, Quiet, else Plain (GitLab CI's collapsible sections
// when gitlab).
func ForMode(mode string, w io.Writer, size func() (cols, rows int), gitlab bool) Renderer {
	switch mode {
	case "tty":
		return NewTTY(w, size)
	case "json":
		return NewJSON(w)
	case "quiet":
		return NewQuiet(w)
	}
	return NewPlain(w, gitlab)
}
