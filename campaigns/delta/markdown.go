package delta

import (
	"strings"
	"unicode"

	"github.com/parley-dev/parley/internal/markdown"
)

// doc is a markdown file as lines, each with its own line ending, so that
// the lines no change touches are written back byte for byte.
type doc struct {
	lines     []line
	eol       string // the ending of new lines: the first line's
	noFinalNL bool   // the file did not end with a line ending

	// Derived by scan after every change.
	heads []heading
	code  []bool // the line is inside a fenced code block (or fences it)
}

type line struct{ s, nl string }

// heading is an ATX heading ("## Title").
type heading struct {
	i     int // line
	level int
	title string // as written, trimmed
	norm  string // normTitle(title)
}

func parseDoc(src []byte) *doc {
	d := &doc{eol: "\n"}
	s := string(src)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			d.lines = append(d.lines, line{s: s})
			d.noFinalNL = true
			break
		}
		l := line{s: s[:i], nl: "\n"}
		if strings.HasSuffix(l.s, "\r") {
			l.s, l.nl = l.s[:len(l.s)-1], "\r\n"
		}
		d.lines = append(d.lines, l)
		s = s[i+1:]
	}
	if len(d.lines) > 0 && d.lines[0].nl != "" {
		d.eol = d.lines[0].nl
	}
	if d.noFinalNL {
		d.lines[len(d.lines)-1].nl = d.eol
	}
	d.scan()
	return d
}

func (d *doc) bytes() []byte {
	var b strings.Builder
	for _, l := range d.lines {
		b.WriteString(l.s)
		b.WriteString(l.nl)
	}
	s := b.String()
	if d.noFinalNL {
		s = strings.TrimSuffix(s, d.eol)
	}
	return []byte(s)
}

// replace puts ss in place of lines [from, to).
func (d *doc) replace(from, to int, ss ...string) {
	nl := make([]line, len(ss))
	for i, s := range ss {
		nl[i] = line{s, d.eol}
	}
	d.lines = append(d.lines[:from], append(nl, d.lines[to:]...)...)
	d.scan()
}

// insert puts ss before line at.
func (d *doc) insert(at int, ss ...string) { d.replace(at, at, ss...) }

func (d *doc) scan() {
	d.heads = d.heads[:0]
	d.code = make([]bool, len(d.lines))
	fence := ""
	for i, l := range d.lines {
		if f, rest := fenceOf(l.s); f != "" {
			switch {
			case fence == "":
				fence = f
				d.code[i] = true
				continue
			case f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(rest) == "":
				fence = ""
				d.code[i] = true
				continue
			}
		}
		if fence != "" {
			d.code[i] = true
			continue
		}
		if level, title, ok := headingOf(l.s); ok {
			d.heads = append(d.heads, heading{i, level, title, normTitle(title)})
		}
	}
}

// fenceOf returns the fence that opens or closes a code block on s
// ("```", "~~~~") and the text after it, or "".
func fenceOf(s string) (fence, rest string) {
	t := strings.TrimLeft(s, " ")
	if len(s)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return "", ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return "", ""
	}
	return t[:n], t[n:]
}

// headingOf reads an ATX heading: up to three spaces, one to six "#", a
// space or the end of the line, the title, optional closing "#"s.
func headingOf(s string) (level int, title string, ok bool) {
	t := strings.TrimLeft(s, " ")
	if len(s)-len(t) > 3 {
		return 0, "", false
	}
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	title = strings.TrimSpace(t[level:])
	if c := strings.TrimRight(title, "#"); c != title && (c == "" || strings.HasSuffix(c, " ") || strings.HasSuffix(c, "\t")) {
		title = strings.TrimSpace(c)
	}
	return level, title, true
}

// The replacers of normTitle, bare and nameKey, built once: building one
// costs more than using it. A *strings.Replacer is safe for concurrent use.
var (
	titleReplacer = strings.NewReplacer("*", "", "_", " ", "`", "", "’", "'")
	bareReplacer  = strings.NewReplacer("**", "", "__", "", "`", "")
	nameReplacer  = strings.NewReplacer("-", " ", "_", " ", "*", "")
)

// normTitle normalizes a heading (or a candidate heading) for matching:
// lower case, no emphasis, straight apostrophes, single spaces, no
// trailing colon.
func normTitle(s string) string {
	s = titleReplacer.Replace(strings.ToLower(s))
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimSpace(strings.TrimSuffix(s, ":"))
}

// stripParen removes a parenthesized remark at the end: "the vendrath job
// (pending)" is "the vendrath job".
func stripParen(s string) string {
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, "("); i > 0 {
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// blank reports whether the document has only blank lines.
func (d *doc) blank() bool {
	for _, l := range d.lines {
		if !isBlank(l.s) {
			return false
		}
	}
	return true
}

// isBlank reports whether a line has only spaces and tabs.
func isBlank(s string) bool { return strings.Trim(s, " \t") == "" }

// isRule reports whether a line is a thematic break: three or more "-",
// "*" or "_", alone but for spaces.
func isRule(s string) bool {
	t := strings.Trim(s, " \t")
	if len(s)-len(strings.TrimLeft(s, " ")) > 3 || t == "" || !strings.ContainsRune("-*_", rune(t[0])) {
		return false
	}
	n := 0
	for _, c := range []byte(t) {
		switch c {
		case t[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// markerOf reads a list item's marker: the indentation, the marker ("-",
// "*", "+", "3." or "3)") and the offset of the item's text.
func markerOf(s string) (indent int, marker string, text int, ok bool) {
	if isRule(s) {
		return 0, "", 0, false
	}
	indent = markdown.Indent(s)
	i := len(s) - len(strings.TrimLeft(s, " \t"))
	j := i
	switch {
	case j < len(s) && strings.IndexByte("-*+", s[j]) >= 0:
		j++
	default:
		for j < len(s) && j-i < 9 && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i || j >= len(s) || (s[j] != '.' && s[j] != ')') {
			return 0, "", 0, false
		}
		j++
	}
	if j < len(s) && s[j] != ' ' && s[j] != '\t' {
		return 0, "", 0, false
	}
	k := j
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	return indent, s[i:j], k, true
}

// item returns the text of a top-level list item on line i (indented
// less than two columns, outside code), or false.
func (d *doc) item(i int) (string, bool) {
	if d.code[i] {
		return "", false
	}
	ind, _, at, ok := markerOf(d.lines[i].s)
	if !ok || ind >= 2 {
		return "", false
	}
	return d.lines[i].s[at:], true
}

// itemEnd returns the end of the item on line i: the line after its last
// line indented deeper than its marker, before to.
func (d *doc) itemEnd(i, to int) int {
	ind := markdown.Indent(d.lines[i].s)
	end := i + 1
	for j := i + 1; j < to; j++ {
		s := d.lines[j].s
		if isBlank(s) {
			continue
		}
		if markdown.Indent(s) <= ind {
			break
		}
		end = j + 1
	}
	return end
}

// content returns the lines of [from, to) from the first non-blank one to
// the last one that is neither blank nor a thematic break; a == b when
// there is none.
func (d *doc) content(from, to int) (a, b int) {
	a = from
	for a < to && isBlank(d.lines[a].s) {
		a++
	}
	b = to
	for b > a && (isBlank(d.lines[b-1].s) || (!d.code[b-1] && isRule(d.lines[b-1].s))) {
		b--
	}
	if a >= b {
		return from, from
	}
	return a, b
}

// listEnding reports whether the content ending at b ends with a list: it
// returns the list's first and last items and whether any line other
// than its items' first lines is in it.
func (d *doc) listEnding(a, b int) (first, last int, more bool, ok bool) {
	first, last = -1, -1
	for j := b - 1; j >= a; j-- {
		s := d.lines[j].s
		if _, isItem := d.item(j); isItem {
			first = j
			if last < 0 {
				last = j
			}
			continue
		}
		if isBlank(s) {
			continue
		}
		if !d.code[j] && markdown.Indent(s) >= 2 {
			more = true
			continue
		}
		break
	}
	return first, last, more, first >= 0
}

// end returns the line that ends the section of heading k: the next
// heading of its level or above, or the end of the file.
func (d *doc) end(k int) int {
	for _, h := range d.heads[k+1:] {
		if h.level <= d.heads[k].level {
			return h.i
		}
	}
	return len(d.lines)
}

// firstChild returns the line of the first heading inside the section of
// heading k (a deeper one), or the section's end.
func (d *doc) firstChild(k int) int {
	if k+1 < len(d.heads) && d.heads[k+1].level > d.heads[k].level {
		return d.heads[k+1].i
	}
	return d.end(k)
}

// secret returns the index of the secret section's heading ("## GM Notes
// (Secret)") and the line where the secret part starts: that heading, or
// the thematic break before it. With no secret section it returns -1 and
// the end of the file.
func (d *doc) secret() (k, start int) {
	for k, h := range d.heads {
		if h.level == 2 && isSecretTitle(h.norm) {
			start = h.i
			j := h.i - 1
			for j >= 0 && isBlank(d.lines[j].s) {
				j--
			}
			if j >= 0 && !d.code[j] && isRule(d.lines[j].s) {
				start = j
			}
			return k, start
		}
	}
	return -1, len(d.lines)
}

func isSecretTitle(norm string) bool {
	return strings.Contains(norm, "secret") || strings.HasPrefix(norm, "gm notes") ||
		strings.HasPrefix(norm, "gm only") || strings.HasPrefix(norm, "dm notes")
}

// find returns the index of the first heading of the level with a line in
// [from, to) whose title is one of titles, tried in order; a title with a
// remark in parentheses ("Active Quests (2)") matches when no other does.
// It returns -1 when none matches.
func (d *doc) find(level, from, to int, titles []string) int {
	for pass := 0; pass < 2; pass++ {
		for _, t := range titles {
			want := normTitle(t)
			for k, h := range d.heads {
				if h.level != level || h.i < from || h.i >= to {
					continue
				}
				got := h.norm
				if pass == 1 {
					got = stripParen(got)
				}
				if got == want {
					return k
				}
			}
		}
	}
	return -1
}

// where names the section holding line i: "Title" or "Title > Subtitle".
func (d *doc) where(i int) string {
	h2, h3 := "", ""
	for _, h := range d.heads {
		if h.i > i {
			break
		}
		switch {
		case h.level <= 2:
			h2, h3 = h.title, ""
		case h.level == 3:
			h3 = h.title
		}
	}
	if h3 != "" {
		return h2 + " > " + h3
	}
	return h2
}

// bare strips a bullet's text down to words: no checkbox, no emphasis.
func bare(s string) string {
	s = strings.TrimSpace(s)
	if _, rest, ok := cutBox(s); ok {
		s = rest
	}
	return strings.TrimSpace(bareReplacer.Replace(s))
}

// cutBox splits a task-list checkbox ("[ ] ", "[x] ") off s.
func cutBox(s string) (box, rest string, ok bool) {
	if len(s) >= 3 && s[0] == '[' && s[2] == ']' && strings.ContainsRune(" xX", rune(s[1])) &&
		(len(s) == 3 || s[3] == ' ' || s[3] == '\t') {
		return s[:3], strings.TrimLeft(s[3:], " \t"), true
	}
	return "", s, false
}

// entitySeps are the separators of an entity's name from the rest, as
// splitEntity finds them.
var entitySeps = []string{" - ", " — ", " – ", ": "}

// splitEntity splits an entity's text at the first " - " (or " — ", " – ",
// ": ") into its name and the rest; a tab counts as a space ("Tom\t-\tx"
// is "Tom" and "x"). sep is the separator as written with spaces.
func splitEntity(s string) (name, sep, rest string) {
	best := findSep(s)
	if best < 0 {
		return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), ":")), "", ""
	}
	sep = sepAt(s, best)
	return strings.TrimSpace(s[:best]), sep, strings.TrimSpace(s[best+len(sep):])
}

// findSep returns the offset of the separator splitEntity splits s at, or
// -1: 0 for text that starts with one ("- no name" names nothing).
func findSep(s string) int {
	t := strings.ReplaceAll(s, "\t", " ") // same offsets: both are a byte
	best := -1
	for _, p := range entitySeps {
		if i := strings.Index(t, p); i >= 0 && (best < 0 || i < best) {
			best = i
		}
		if q := p[1:]; strings.HasPrefix(t, q) && q != " " {
			return 0
		}
	}
	return best
}

// sepAt returns the separator at offset i of s, as written with spaces.
func sepAt(s string, i int) string {
	t := strings.ReplaceAll(s[i:], "\t", " ")
	for _, p := range entitySeps {
		if i == 0 && strings.HasPrefix(t, p[1:]) && p[1:] != " " {
			return p[1:]
		}
		if strings.HasPrefix(t, p) {
			return p
		}
	}
	return ""
}

// normSep returns an entity's text with the separator splitEntity finds
// written with spaces where it has tabs ("Tom\t-\tx" is "Tom - x"); the
// rest of the text is left as it is.
func normSep(s string) string {
	i := findSep(s)
	if i < 0 {
		return s
	}
	sep := sepAt(s, i)
	return s[:i] + sep + s[i+len(sep):]
}

// key normalizes a name for matching: lower case, single spaces, no
// trailing punctuation.
func key(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	return strings.TrimRight(s, ".:;,")
}

// entityKey is the key of the entity a bullet's text (or a delta entry's
// text) names.
func entityKey(text string) string {
	name, _, _ := splitEntity(bare(text))
	return key(name)
}

// nameKey normalizes a character's name: "tilda-brannock" and "Tilda
// Brannock" are the same.
func nameKey(s string) string {
	return key(nameReplacer.Replace(s))
}

// hasPrefixWord reports whether s starts with p followed by something
// other than a letter or a digit.
func hasPrefixWord(s, p string) bool {
	if p == "" || !strings.HasPrefix(s, p) {
		return false
	}
	for _, r := range s[len(p):] {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}
	return true
}

// isPlaceholder reports whether an item's text only says there is nothing
// yet: "None", "None yet - campaign not started", "N/A", "TBD", "Party not
// yet established".
func isPlaceholder(text string) bool {
	t := strings.ToLower(bare(text))
	return hasPrefixWord(t, "none") || hasPrefixWord(t, "n/a") || hasPrefixWord(t, "tbd") ||
		hasPrefixWord(t, "nothing yet") || strings.Contains(t, "not yet established")
}

// tableCell returns the first cell of a table row, or false for a line
// that is not a row (or is the delimiter row).
func tableCell(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "|") {
		return "", false
	}
	cells := strings.Split(t, "|")
	if len(cells) < 3 {
		return "", false
	}
	c := strings.TrimSpace(cells[1])
	if strings.Trim(c, "-: ") == "" {
		return "", false
	}
	return c, true
}
