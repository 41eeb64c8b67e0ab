package main

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// printable returns s safe to print on a terminal, on one line: control
// characters (a newline, a tab, an escape sequence that would recolour or
// retitle the terminal), the characters that reorder text (the bidi
// controls of "Trojan Source") and line separators are written as Go
// escapes (\n, \t, \x1b, \u202e), and bytes that are not UTF-8 as \xff.
// Everything else is kept, accents and emoji included. A file name, a
// reason or a note may hold anything: what parley prints about it must
// not be able to change what else is on the screen.
func printable(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if c >= 0x80 && !(r == utf8.RuneError && size == 1) && !unsafeRune(r) {
			i += size
			continue
		}
		break
	}
	if i == len(s) {
		return s // the usual case: nothing to escape
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i]), 16))
		case r == '\\' || r >= 0x20 && r < 0x7f || r >= 0x80 && !unsafeRune(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// printableLines is printable for a text of several lines (an error
// that joins others): each line is escaped, and the line breaks kept.
func printableLines(s string) string {
	if !strings.Contains(s, "\n") {
		return printable(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return strings.Join(lines, "\n")
}

// printableText is printable for a text people read as it is written
// (a message's body, a narrative at the seat): its line breaks (LF or
// CR LF) and tabs are kept, every other control character is escaped.
func printableText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			cells[j] = printable(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

// textWriter writes through w what is written to it as printableText:
// what agents wrote cannot recolour, retitle or clear the terminal it is
// shown on. Each Write must hold whole characters (a fmt.Fprintf does).
type textWriter struct{ w io.Writer }

func (t textWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, printableText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// unsafeRune reports whether a non-ASCII rune is one printable escapes:
// C1 controls, line and paragraph separators, and the bidi controls.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r < 0xa0: // C1 controls
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f, // arabic letter mark, LRM, RLM
		r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return false
}

// shorten cuts s to at most n characters, ending it with "…" when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
