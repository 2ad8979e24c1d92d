package progress

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ShortDigest is d's algorithm and its first 12 hex digits
// (sha256:0123456789ab), where a digest stands alone in a line; anything
// else is returned as is.
func ShortDigest(d string) string {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) <= 12 {
		return d
	}
	return alg + ":" + ShortHex(hex)
}

// ShortHex is only the first 12 hex digits of d (0123456789ab), its
// algorithm dropped: for a table column or a live line, where every digest
// is sha256 and width counts. ShortDigest keeps the algorithm.
func ShortHex(d string) string {
	if _, hex, ok := strings.Cut(d, ":"); ok {
		d = hex
	}
	return d[:min(len(d), 12)]
}

// Size is n bytes in binary units with one decimal (512 B, 1.5 KiB,
// 23.4 MiB), as the summary prints sizes.
func Size(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// Duration is d as a person reads it: 0.4s, 12.3s, 1m02s.
func Duration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// logfmt writes fields as key=value, quoting values that need it.
func logfmt(b *strings.Builder, fields []Field) {
	for _, f := range fields {
		b.WriteByte(' ')
		b.WriteString(f.Key)
		b.WriteByte('=')
		b.WriteString(quoteIfNeeded(f.Value))
	}
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}

// clip shortens s to at most width runes, marking the cut with "…".
func clip(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	if width == 1 {
		return string(r[:1])
	}
	return string(r[:width-1]) + "…"
}

// FirstLine is the first line of s that is not blank, trimmed: the gist of
// a message whose detail follows on later lines (an error's compiler
// output, a program's output after its --version line). The one way
// helperbuild shortens a message to a line; JoinLines keeps all of it.
func FirstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(first)
}

// JoinLines is s on one line: its lines (split at \n and \r), trimmed,
// blank ones dropped, joined with sep. The one way helperbuild flattens a
// message (recipe errors with " ", the command's error line with " | ").
func JoinLines(s, sep string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return strings.TrimSpace(s)
	}
	var parts []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, sep)
}
