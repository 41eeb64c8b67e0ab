// Package markdown holds the small rules of markdown that parley's
// readers of files people write (sheets, deltas, the secret parts of a
// campaign) share.
package markdown

// Indent is the width of a line's leading spaces and tabs, a tab
// advancing to the next multiple of 4, as markdown counts it (a line
// indented 4 or more is code).
func Indent(line string) int {
	n := 0
	for _, c := range []byte(line) {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n
		}
	}
	return n
}
