package main

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/visible"
)

// printable returns s safe to print on a terminal, on one line (see
// visible.Line): a file name, a reason or a note may hold anything.
func printable(s string) string { return visible.Line(s) }

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

// errIndent is how far main indents the lines of an error after its
// first, under "parley: ": they read as part of it, not as other output.
const errIndent = "    "

// indentLines indents the lines of s after the first by errIndent,
// those that start at the margin (every problem of a file, errors.Join's
// lines); a line already indented was laid out under the first by the
// error itself (parley run's list of files refused) and is kept.
func indentLines(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines[1:] {
		if l != "" && l[0] != ' ' && l[0] != '\t' {
			lines[i+1] = errIndent + l
		}
	}
	return strings.Join(lines, "\n")
}

// printableText is printable for a text people read as it is written
// (a message's body, a narrative at the seat): its line breaks and tabs
// are kept (see visible.Text), as the web view shows them.
func printableText(s string) string { return visible.Text(s) }

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

// shorten cuts s to at most n characters, ending it with "…" when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
