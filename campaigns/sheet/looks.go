package sheet

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// sheetMarks are lines only a character sheet holds: a table row or a
// bold label for hit points, level, armor class or an ability; a heading
// for equipment, inventory or abilities; a frontmatter key parley reads.
var sheetMarks = regexp.MustCompile(`(?i)^(?:\|.*\b(?:hit points|hp|level|armor class|str)\b|\*\*(?:hit points|hp|level|armor class)\*\*|#{1,6}\s+(?:equipment|inventory|ability scores|abilities|currency)\b|(?:hp|max_hp|level|abilities|inventory)\s*:)`)

// Looks reports whether a file looks like a character sheet, whether or
// not it can be read as one. People keep other files beside the sheets in
// party/ (appearance briefs, relationship notes): those do not look like
// one, and are not sheets with mistakes.
func Looks(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxSize)
	for sc.Scan() {
		if sheetMarks.MatchString(strings.TrimSpace(sc.Text())) {
			return true
		}
	}
	return false
}
