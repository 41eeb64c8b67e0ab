package delta

import (
	"errors"
	"strings"
	"unicode"

	"github.com/parley-dev/parley/internal/markdown"
)

// Parse reads a delta that a person or an agent wrote; path names it in
// errors (Apply passes "tmp/gm-state-delta.md"). Parse always returns a
// Delta holding every entry it read. An entry that cannot be applied to
// any file (unknown keyword, a line that names nothing, bad hit points) is
// in it too, with Err set; the error returned joins those Errs, each a
// *LineError.
func Parse(path string, data []byte) (*Delta, error) {
	d := &Delta{Path: path}
	text := strings.TrimPrefix(string(data), "\ufeff")
	// open holds the entries indented lines may belong to, outermost
	// first: a top-level entry, then the entries started by indented
	// keyword lines under it.
	type opened struct{ entry, indent int }
	var open []opened
	blanks := 0 // blank lines since the last line of an entry
	comment := false
	for i, ln := range strings.Split(text, "\n") {
		ln = strings.TrimRight(ln, "\r")
		trimmed := strings.TrimSpace(ln)
		if comment {
			comment = !strings.Contains(trimmed, "-->")
			continue
		}
		if trimmed == "" {
			blanks++
			continue
		}
		ind := markdown.Indent(ln)
		for len(open) > 0 && ind <= open[len(open)-1].indent {
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			top := open[len(open)-1].entry
			if startsEntry(&d.Entries[top], trimmed) {
				// A keyword line is an entry of its own, wherever it is:
				// an indented SECRET is a secret, not an NPC's detail.
				e, _ := parseLine(i+1, ln, trimmed)
				d.Entries = append(d.Entries, e)
				open = append(open, opened{len(d.Entries) - 1, ind})
				blanks = 0
				continue
			}
			e := &d.Entries[top]
			for ; blanks > 0; blanks-- {
				e.Source = append(e.Source, "")
				e.More = append(e.More, "")
			}
			e.Source = append(e.Source, ln)
			e.More = append(e.More, ln)
			continue
		}
		blanks = 0
		switch {
		case strings.HasPrefix(trimmed, "<!--"):
			comment = !strings.Contains(trimmed[4:], "-->")
			continue
		case strings.HasPrefix(trimmed, "#"), isRule(trimmed):
			continue
		}
		e, ok := parseLine(i+1, ln, trimmed)
		if !ok {
			continue
		}
		d.Entries = append(d.Entries, e)
		open = append(open, opened{len(d.Entries) - 1, ind})
	}
	var errs []error
	for i := range d.Entries {
		e := &d.Entries[i]
		e.More = dedent(e.More)
		if e.Err == nil {
			promote(e)
			e.Err = check(e)
		}
		if e.Err != nil {
			e.Err = lineError(path, e, e.Err)
			errs = append(errs, e.Err)
		}
	}
	return d, errors.Join(errs...)
}

// startsEntry reports whether trimmed, a line indented under entry e,
// starts an entry of its own. A SECRET or UPCOMING line, in any of the
// forms parseLine reads, is the GM's wherever it is written, never a
// detail of the entry above (which may be going to the players' file).
// Another keyword starts an entry when written plainly ("- NPC: Wiven");
// in bold it is a field of the entry above (an NPC's "- **Location**: the
// docks", the Current Situation's "**Location**:"), and a character's
// "Name: 8/12" under Party HP is not a keyword at all.
func startsEntry(e *Entry, trimmed string) bool {
	s := stripBullet(trimmed)
	word, _, ok := cutKnown(s)
	if !ok {
		return false
	}
	switch keywords[normWord(word)] {
	case Secret, Upcoming:
		return true
	}
	return !strings.HasPrefix(s, "**") && !strings.HasPrefix(s, "__")
}

// parseLine reads a keyword line; it reports false for a bare bullet.
func parseLine(n int, ln, trimmed string) (Entry, bool) {
	e := Entry{Line: n, Source: []string{ln}}
	s := stripBullet(trimmed)
	if s == "" {
		return e, false
	}
	if word, text, ok := cutKnown(s); ok {
		e.Keyword, e.Word, e.Text = keywords[normWord(word)], word, text
		return e, true
	}
	if word := bareKeyword(s); word != "" {
		// "NPC Oswin Crane - the miller": the target's rules decide
		// whether it is a keyword without its colon.
		e.Keyword, e.Text, e.Bare = Learned, s, word
		return e, true
	}
	word, text, bold, ok := cutKeyword(s)
	switch {
	case !ok:
	case isHPValue(text) && isName(word):
		e.Keyword, e.Text = PartyHP, s
		return e, true
	case bold || isUpper(word):
		e.Word, e.Text, e.Err = word, text, ErrUnknownKeyword
		return e, true
	}
	e.Keyword, e.Text = Learned, s
	return e, true
}

// cutKnown splits a line that starts with a known keyword, in any of the
// forms a delta may write it: "KEYWORD: text", "**KEYWORD**: text",
// "**KEYWORD:** text", "**KEYWORD** text", "[KEYWORD] text" and "KEYWORD
// - text" (or an en or em dash). It reports false for any other line, an
// unknown keyword's included.
func cutKnown(s string) (word, text string, ok bool) {
	known := func(w string) bool { return isWord(w) && keywords[normWord(w)] != "" }
	if w, t, _, ok := cutKeyword(s); ok && known(w) {
		return w, t, true
	}
	var inner, after string
	switch {
	case strings.HasPrefix(s, "**"), strings.HasPrefix(s, "__"):
		j := strings.Index(s[2:], s[:2])
		if j < 0 {
			return "", "", false
		}
		inner, after = s[2:2+j], s[4+j:]
		if w, dash := cutDash(inner); dash && strings.TrimSpace(dropSep(inner[len(w):])) == "" {
			inner = w // "**SECRET -** text"
		}
	case strings.HasPrefix(s, "["):
		j := strings.IndexByte(s, ']')
		if j < 0 {
			return "", "", false
		}
		inner, after = boldReplacer.Replace(s[1:j]), s[j+1:]
	default:
		w, dash := cutDash(s)
		if !dash || !known(strings.TrimSpace(w)) {
			return "", "", false
		}
		return strings.TrimSpace(w), strings.TrimSpace(dropSep(s[len(w):])), true
	}
	inner = strings.TrimSpace(inner)
	if !known(inner) {
		return "", "", false
	}
	return inner, strings.TrimSpace(dropSep(after)), true
}

// bareKeyword returns the keyword s starts with, as written, when a
// space and more text follow it rather than its colon ("NPC Oswin Crane -
// the miller", "Party HP tilda 9/14"), or "". The longest keyword wins:
// "Party HP" before "Party".
func bareKeyword(s string) string {
	var ends []int // where each of the first three words ends
	for i := 0; i < len(s) && len(ends) < 3; {
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		ends = append(ends, j)
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		i = j
	}
	for k := len(ends) - 1; k >= 0; k-- {
		w, rest := s[:ends[k]], s[ends[k]:]
		if isWord(w) && keywords[normWord(w)] != "" && strings.TrimSpace(rest) != "" {
			return w
		}
	}
	return ""
}

// dashes are the separators of "KEYWORD - text": a hyphen with spaces
// (or tabs) around it, an en dash, an em dash.
var dashes = []string{"-", "–", "—"}

// cutDash returns the text of s before its first dash separator, and
// whether there is one. A hyphen separates when a space or a tab is on
// its left and a space, a tab or the end of s on its right
// ("Secret-keeper" is one word).
func cutDash(s string) (before string, ok bool) {
	for i := 0; i < len(s); i++ {
		for _, d := range dashes {
			if !strings.HasPrefix(s[i:], d) {
				continue
			}
			if d == "-" {
				j := i + 1
				if i == 0 || !isSpace(s[i-1]) || (j < len(s) && !isSpace(s[j])) {
					continue
				}
			}
			return s[:i], true
		}
	}
	return s, false
}

// keywordSeps are what dropSep removes.
var keywordSeps = append([]string{":"}, dashes...)

// dropSep removes the separator after a keyword from the start of s: a
// colon or a dash, and the spaces around it.
func dropSep(s string) string {
	s = strings.TrimLeft(s, " \t")
	for _, p := range keywordSeps {
		if strings.HasPrefix(s, p) {
			return strings.TrimLeft(s[len(p):], " \t")
		}
	}
	return s
}

// isSpace reports whether c is a space or a tab.
func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// cutKeyword splits "KEYWORD: text", "**KEYWORD**: text" or
// "**KEYWORD:** text"; bold reports the bold forms.
func cutKeyword(s string) (word, text string, bold, ok bool) {
	if strings.HasPrefix(s, "**") || strings.HasPrefix(s, "__") {
		mark := s[:2]
		j := strings.Index(s[2:], mark)
		if j < 0 {
			return "", "", false, false
		}
		inner, after := s[2:2+j], strings.TrimLeft(s[4+j:], " \t")
		switch {
		case strings.HasSuffix(inner, ":"):
			word, text = inner[:len(inner)-1], after
		case strings.HasPrefix(after, ":"):
			word, text = inner, after[1:]
		default:
			return "", "", false, false
		}
		word = strings.TrimSpace(word)
		return word, strings.TrimSpace(text), true, isWord(word)
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", "", false, false
	}
	word = strings.TrimSpace(s[:i])
	return word, strings.TrimSpace(s[i+1:]), false, isWord(word)
}

// isWord reports whether s can be a keyword: a letter, then up to 29
// letters, digits, spaces, hyphens, underscores or apostrophes.
func isWord(s string) bool {
	if s == "" || len(s) > 30 {
		return false
	}
	for i, r := range s {
		switch {
		case unicode.IsLetter(r):
		case i == 0:
			return false
		case unicode.IsDigit(r), r == ' ', r == '-', r == '_', r == '\'', r == '’':
		default:
			return false
		}
	}
	return true
}

// isName reports whether s can name a character: letters, spaces,
// hyphens, apostrophes and dots.
func isName(s string) bool {
	letters := 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == ' ', r == '-', r == '_', r == '\'', r == '’', r == '.':
		default:
			return false
		}
	}
	return letters > 0
}

// isUpper reports whether s has two letters or more, none lower-case.
func isUpper(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 2
}

// isHPValue reports whether s starts like hit points: "8/12", "8 / 12 HP".
func isHPValue(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	s = strings.TrimLeft(s[i:], " ")
	if !strings.HasPrefix(s, "/") {
		return false
	}
	s = strings.TrimLeft(s[1:], " ")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// wordReplacer is normWord's, built once.
var wordReplacer = strings.NewReplacer("_", " ", "-", " ")

// normWord normalizes a keyword: lower case, "_" and "-" as spaces, one
// space between words.
func normWord(s string) string {
	s = wordReplacer.Replace(strings.ToLower(s))
	return strings.Join(strings.Fields(s), " ")
}

// promote makes the first indented line the text of an entry that has
// none, for the keywords whose text is one bullet ("- SECRET:" followed
// by the secret on the next, indented, line).
func promote(e *Entry) {
	switch e.Keyword {
	case NPC, Quest, Location, Secret, Upcoming, Learned:
	default:
		return
	}
	if e.Text != "" {
		return
	}
	for i, m := range e.More {
		if t := stripBullet(strings.TrimSpace(m)); t != "" {
			e.Text = t
			e.More = dedent(e.More[i+1:])
			return
		}
	}
}

// check reports why an entry cannot be applied to any file, or nil.
func check(e *Entry) error {
	for _, m := range e.More {
		if breaksStructure(m) {
			return ErrStructure
		}
	}
	switch e.Keyword {
	case NPC, Quest, Location:
		if name, _, _ := splitEntity(bare(e.Text)); name == "" {
			return ErrEmpty
		}
	case Secret, Upcoming, Learned:
		if e.Text == "" {
			return ErrEmpty
		}
	case Situation:
		if breaksStructure(e.Text) {
			return ErrStructure
		}
		if e.Text == "" && len(e.More) == 0 {
			return ErrEmpty
		}
	case PartyHP:
		_, err := parseHP(e.Text, e.More)
		return err
	default:
		return ErrUnknownKeyword
	}
	return nil
}

// breaksStructure reports whether a line, written into a target, would be
// read as a heading or a code fence.
func breaksStructure(s string) bool {
	t := strings.TrimLeft(s, " \t")
	if _, _, ok := headingOf(t); ok {
		return true
	}
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// stripBullet removes a list marker ("- ", "* ", "+ ", "1. ", "1) ") from
// the start of a trimmed line; a marker alone gives "".
func stripBullet(s string) string {
	if _, _, n, ok := markerOf(s); ok {
		return strings.TrimSpace(s[n:])
	}
	return s
}

// hp is the hit points of one character, from a Party HP line.
type hp struct{ name, value string }

// parseHP reads the characters of a Party HP entry: in its text ("tilda
// 8/12", "Tilda Brannock: 8/12", several joined by "," or ";") and on
// each indented line.
func parseHP(text string, more []string) ([]hp, error) {
	var out []hp
	for _, s := range append([]string{text}, more...) {
		s = stripBullet(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		hs, ok := splitHP(s)
		if !ok {
			return nil, ErrHP
		}
		out = append(out, hs...)
	}
	if len(out) == 0 {
		return nil, ErrEmpty
	}
	return out, nil
}

// splitHP reads one or more characters' hit points from s.
func splitHP(s string) ([]hp, bool) {
	if parts := splitOutside(s); len(parts) > 1 {
		var out []hp
		for _, p := range parts {
			h, ok := oneHP(p)
			if !ok {
				out = nil
				break
			}
			out = append(out, h)
		}
		if out != nil {
			return out, true
		}
	}
	h, ok := oneHP(s)
	return []hp{h}, ok
}

// boldReplacer drops bold markers, for oneHP.
var boldReplacer = strings.NewReplacer("**", "", "__", "")

// oneHP reads "Name: value" or "name 8/12 ...".
func oneHP(s string) (hp, bool) {
	s = strings.TrimSpace(boldReplacer.Replace(s))
	if i := strings.IndexByte(s, ':'); i >= 0 {
		h := hp{strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])}
		return h, isName(h.name) && h.value != ""
	}
	f := strings.Fields(s)
	for k, w := range f {
		if w[0] >= '0' && w[0] <= '9' {
			h := hp{strings.Join(f[:k], " "), strings.Join(f[k:], " ")}
			return h, isName(h.name)
		}
	}
	return hp{}, false
}

// splitOutside splits s at "," and ";" outside parentheses.
func splitOutside(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',', ';':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// dedent removes the indentation common to the non-blank lines, and blank
// lines at either end.
func dedent(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil
	}
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && (least < 0 || markdown.Indent(l) < least) {
			least = markdown.Indent(l)
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out[i] = unindent(l, least)
	}
	return out
}

// unindent removes n columns of indentation from s, turning the tabs of
// its indentation into spaces.
func unindent(s string, n int) string {
	w := markdown.Indent(s)
	i := len(s) - len(strings.TrimLeft(s, " \t"))
	return strings.Repeat(" ", max(w-n, 0)) + s[i:]
}
