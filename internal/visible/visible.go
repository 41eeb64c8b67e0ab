// Package visible decides how text someone else wrote is shown, on a
// terminal or in a web page: control characters (an escape sequence that
// would recolour or retitle a terminal), the characters that reorder text
// (the bidi controls of "Trojan Source"), line separators and bytes that
// are not UTF-8 are written as Go escapes (\x1b, \u202e, \xff), so that
// they are seen and do nothing. Everything else is kept, accents and
// emoji included.
package visible

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line returns s on one line, every control character escaped: a
// newline, a tab, an escape (\n, \t, \x1b), a bidi control (\u202e), a
// byte that is not UTF-8 (\xff). A file name, a reason or a note may hold
// anything: what is shown about it must not be able to change what else
// is on the screen.
func Line(s string) string {
	i := safe(s, false)
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

// Text is Line for a text people read as it is written (a message's
// body, a narrative at the seat, a web page): its line breaks (LF or CR
// LF) and tabs are kept, every other control character is escaped.
func Text(s string) string {
	if safe(s, true) == len(s) {
		return s // the usual case: nothing to escape
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			cells[j] = Line(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

// safe returns the length of the start of s that is shown as it is: up
// to the first character Line escapes (with breaks, a newline or a tab
// kept, as Text keeps them, are not).
func safe(s string, breaks bool) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || breaks && (c == '\n' || c == '\t') {
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
	return i
}

// unsafeRune reports whether a non-ASCII rune is one Line escapes: C1
// controls, line and paragraph separators, and the bidi controls.
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
