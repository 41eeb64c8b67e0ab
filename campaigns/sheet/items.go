package sheet

import (
	"strconv"
	"strings"
	"unicode"
)

// Slug returns the slug of an item's name: its words without the count,
// lower case, joined by "-", apostrophes dropped and anything in
// parentheses or after a note separator left out:
//
//	Slug("Two daggers")         = "daggers"
//	Slug("20 crossbow bolts")   = "crossbow-bolts"
//	Slug("Burglar's pack (...)") = "burglars-pack"
//
// Items are matched by slug singular or plural alike: "dagger" and
// "daggers" name the same item, as do "crossbow-bolts" and "crossbow
// bolt".
func Slug(name string) string {
	tx := parseItemText(name)
	return kebab(name[tx.nameStart:tx.nameEnd])
}

func kebab(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’' || r == '‘':
		default:
			dash = true
		}
	}
	return b.String()
}

// slugKey reduces each word of a slug to a stem that singular and plural
// share ("daggers" and "dagger" to "dagger", "torches" and "torch" to
// "torch", "handaxes" and "handaxe" to "handax").
func slugKey(slug string) string {
	words := strings.Split(slug, "-")
	for i, w := range words {
		words[i] = stem(w)
	}
	return strings.Join(words, "-")
}

func stem(w string) string {
	switch n := len(w); {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 3 && strings.HasSuffix(w, "es"):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:n-1]
	}
	if n := len(w); n >= 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

// countKind says how a line gives an item's quantity.
type countKind int

const (
	noCount    countKind = iota
	leadCount            // "20 crossbow bolts", "Two daggers", "a torch", "2x Dagger"
	trailCount           // "Torch (x3)", "Torch x3", "Rations (5)"
)

// itemText is an item as a line of text says it. Offsets are into the
// text parsed.
type itemText struct {
	qty                int
	count              countKind
	cStart, cEnd       int // the count: digits or a number word
	nameStart, nameEnd int
	suffixEnd          int // after a container's word ("Pack, containing"); 0 when none
	note               string
}

// parseItemText reads an item's text: a count, the name, and a note in
// parentheses or after " — ", " - " or ": ".
func parseItemText(s string) itemText {
	tx := itemText{qty: 1}
	end := len(s)
	for end > 0 && isSpace(s[end-1]) {
		end--
	}
	i := 0
	for i < end && isSpace(s[i]) {
		i++
	}
	if n, cs, ce, ns, ok := leadingCount(s, i, end); ok {
		tx.qty, tx.count, tx.cStart, tx.cEnd = n, leadCount, cs, ce
		i = ns
	}
	j := nameStop(s, i, end)
	ne := j
	for ne > i && isSpace(s[ne-1]) {
		ne--
	}
	if ne == i { // nothing before the "(" or separator: the whole text is the name
		j, ne = end, end
	}
	if k := containerWord(s, i, ne, end); k > i {
		tx.suffixEnd, ne = ne, k
	}
	tx.nameStart, tx.nameEnd = i, ne
	var mark span // a count marker in the rest
	if tx.count == noCount {
		if k, ds, de, n, ok := trailingX(s, i, ne); ok {
			tx.qty, tx.count, tx.cStart, tx.cEnd = n, trailCount, ds, de
			tx.nameEnd = k
		} else if g, ds, de, n, ok := bareCount(s, j, end); ok {
			tx.qty, tx.count, tx.cStart, tx.cEnd = n, trailCount, ds, de
			mark = g
		} else if g, ds, de, n, ok := countGroup(s, j, end); ok {
			tx.qty, tx.count, tx.cStart, tx.cEnd = n, trailCount, ds, de
			mark = g
		}
	}
	rest := s[j:end]
	if mark.ok() {
		rest = strings.TrimSpace(s[j:mark.start]) + " " + strings.TrimSpace(s[mark.end:end])
	}
	tx.note = normalizeNote(rest)
	return tx
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// leadingCount reads a count at s[i:]: digits (commas allowed, as in
// "1,000"), optionally followed by "x", or a number word, then a space and
// a name that does not start with a unit. It returns the quantity, the
// count's span and where the name starts.
func leadingCount(s string, i, end int) (n, cs, ce, ns int, ok bool) {
	k := i
	switch {
	case k < end && isDigit(s[k]):
		digits := 0
		for k < end && (isDigit(s[k]) || s[k] == ',' && k+1 < end && isDigit(s[k+1]) && k > i) {
			if s[k] != ',' {
				digits++
				n = n*10 + int(s[k]-'0')
			}
			k++
			if digits > 9 {
				return 0, 0, 0, 0, false
			}
		}
		ce = k
		if k < end && (s[k] == 'x' || s[k] == 'X') {
			k++
		} else if strings.HasPrefix(s[k:end], "×") {
			k += len("×")
		}
	case k < end && isLetter(s[k]):
		for k < end && isLetter(s[k]) {
			k++
		}
		n = numberWord(strings.ToLower(s[i:k]))
		if n == 0 {
			return 0, 0, 0, 0, false
		}
		ce = k
	default:
		return 0, 0, 0, 0, false
	}
	if k >= end || !isSpace(s[k]) {
		return 0, 0, 0, 0, false
	}
	for k < end && isSpace(s[k]) {
		k++
	}
	w := k
	for w < end && (isLetter(s[w]) || s[w] == '.') {
		w++
	}
	if k >= end || isUnit(strings.ToLower(strings.TrimSuffix(s[k:w], "."))) {
		return 0, 0, 0, 0, false
	}
	return n, i, ce, k, true
}

func numberWord(w string) int {
	switch w {
	case "a", "an", "one":
		return 1
	case "two":
		return 2
	case "three":
		return 3
	case "four":
		return 4
	case "five":
		return 5
	case "six":
		return 6
	case "seven":
		return 7
	case "eight":
		return 8
	case "nine":
		return 9
	case "ten":
		return 10
	case "eleven":
		return 11
	case "twelve":
		return 12
	case "thirteen":
		return 13
	case "fourteen":
		return 14
	case "fifteen":
		return 15
	case "sixteen":
		return 16
	case "seventeen":
		return 17
	case "eighteen":
		return 18
	case "nineteen":
		return 19
	case "twenty":
		return 20
	}
	return 0
}

// isUnit reports whether a count before w measures rather than counts:
// "50 ft hempen rope" is one rope.
func isUnit(w string) bool {
	switch w {
	case "ft", "feet", "foot", "lb", "lbs", "pound", "pounds", "oz", "ounce", "ounces",
		"gallon", "gallons", "pint", "pints", "yard", "yards", "yd", "inch", "inches",
		"mile", "miles", "m", "cm", "kg", "g":
		return true
	}
	return false
}

// containerWord returns where the name s[i:ne] ends without a word that
// says a list of contents follows it: "Explorer's pack, containing:",
// "Chest contains", "Pouch with:" ("with" only before a closing colon).
// It returns i when there is none, or when nothing would be left.
func containerWord(s string, i, ne, end int) int {
	words := []string{"containing", "contains"}
	if strings.HasSuffix(strings.TrimRight(s[:end], " \t"), ":") {
		words = append(words, "with")
	}
	low := strings.ToLower(s[i:ne])
	for _, w := range words {
		if !strings.HasSuffix(low, w) || len(low) == len(w) || !isSpace(low[len(low)-len(w)-1]) {
			continue
		}
		k := ne - len(w)
		for k > i && isSpace(s[k-1]) {
			k--
		}
		if k > i && s[k-1] == ',' {
			k--
		}
		for k > i && isSpace(s[k-1]) {
			k--
		}
		return k
	}
	return i
}

// nameStop returns where the name starting at i ends: at the first "(" or
// note separator outside brackets.
func nameStop(s string, i, end int) int {
	depth := 0
	for k := i; k < end; k++ {
		switch c := s[k]; c {
		case '(':
			if depth == 0 {
				return k
			}
			depth++
		case '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth == 0 {
				r := s[k:end]
				for _, sep := range [...]string{" — ", " – ", " -- ", " - "} {
					if strings.HasPrefix(r, sep) {
						return k
					}
				}
			}
		case ':':
			if depth == 0 && (k+1 == end || isSpace(s[k+1])) {
				return k
			}
		}
	}
	return end
}

// trailingX finds a count "x3" or "×3" at the end of the name s[i:ne]. It
// returns where the name then ends, the digits and the quantity.
func trailingX(s string, i, ne int) (k, ds, de, n int, ok bool) {
	de = ne
	ds = de
	for ds > i && isDigit(s[ds-1]) {
		ds--
	}
	if ds == de || de-ds > 9 {
		return 0, 0, 0, 0, false
	}
	x := ds
	switch {
	case x > i && (s[x-1] == 'x' || s[x-1] == 'X'):
		x--
	case x-len("×") >= i && s[x-len("×"):x] == "×":
		x -= len("×")
	default:
		return 0, 0, 0, 0, false
	}
	if x == i || !isSpace(s[x-1]) {
		return 0, 0, 0, 0, false
	}
	k = x
	for k > i && isSpace(s[k-1]) {
		k--
	}
	if k == i {
		return 0, 0, 0, 0, false
	}
	n, _ = strconv.Atoi(s[ds:de])
	return k, ds, de, n, true
}

// countGroup finds a "(x3)" group outside brackets in s[j:end]. It
// returns the group, the digits and the quantity.
func countGroup(s string, j, end int) (g span, ds, de, n int, ok bool) {
	depth, open := 0, -1
	for k := j; k < end; k++ {
		switch s[k] {
		case '(':
			if depth == 0 {
				open = k
			}
			depth++
		case ')':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			in := strings.TrimSpace(s[open+1 : k])
			a := open + 1 + strings.Index(s[open+1:k], in)
			var rest string
			switch {
			case strings.HasPrefix(in, "x") || strings.HasPrefix(in, "X"):
				rest = in[1:]
			case strings.HasPrefix(in, "×"):
				rest = in[len("×"):]
			default:
				continue
			}
			rest = strings.TrimLeft(rest, " ")
			if rest == "" || len(rest) > 9 || strings.TrimLeft(rest, "0123456789") != "" {
				continue
			}
			n, _ = strconv.Atoi(rest)
			de = a + len(in)
			return span{open, k + 1}, de - len(rest), de, n, true
		}
	}
	return span{}, 0, 0, 0, false
}

// bareCount finds a count in parentheses, "(5)", opening at s[j]: right
// after the name. It returns the group, the digits and the quantity.
func bareCount(s string, j, end int) (g span, ds, de, n int, ok bool) {
	if j >= end || s[j] != '(' {
		return span{}, 0, 0, 0, false
	}
	ds = skipSpaces(s, j+1)
	de = digitsEnd(s[:end], ds)
	k := skipSpaces(s[:end], de)
	if de == ds || de-ds > 9 || k >= end || s[k] != ')' {
		return span{}, 0, 0, 0, false
	}
	n, _ = strconv.Atoi(s[ds:de])
	return span{j, k + 1}, ds, de, n, true
}

// normalizeNote turns what follows a name into its note: without a
// leading separator, and without the parentheses when it is one group.
func normalizeNote(r string) string {
	r = strings.TrimSpace(r)
	for _, sep := range [...]string{"—", "–", "--", "-", ":"} {
		if strings.HasPrefix(r, sep) {
			r = strings.TrimSpace(r[len(sep):])
			break
		}
	}
	if len(r) >= 2 && r[0] == '(' && r[len(r)-1] == ')' {
		depth := 0
		for k := 0; k < len(r); k++ {
			switch r[k] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 && k < len(r)-1 {
					return r
				}
			}
		}
		r = strings.TrimSpace(r[1 : len(r)-1])
	}
	return r
}

// qtyEdits returns the edits, relative to the text tx was parsed from,
// that make the item's quantity q (at least 1): the count rewritten as
// digits where it was found, a trailing plural "s" adjusted when a
// leading count goes to or from 1, or " (xN)" after a name that had no
// count.
func (tx itemText) qtyEdits(s string, q int) []edit {
	if q == tx.qty && tx.count != leadCount {
		return nil
	}
	switch tx.count {
	case noCount:
		at := tx.nameEnd
		if tx.suffixEnd > 0 {
			at = tx.suffixEnd // "Pack, containing (x2):" reads back as "Pack"
		}
		return []edit{{at, at, " (x" + itoa(q) + ")"}}
	case trailCount:
		return []edit{{tx.cStart, tx.cEnd, itoa(q)}}
	}
	tok := s[tx.cStart:tx.cEnd]
	num := itoa(q)
	if strings.Contains(tok, ",") {
		num = withCommas(q)
	}
	var edits []edit
	if num != tok {
		edits = append(edits, edit{tx.cStart, tx.cEnd, num})
	}
	if (tx.qty == 1) != (q == 1) {
		if e, ok := pluralEdit(s, tx.nameStart, tx.nameEnd, q == 1); ok {
			edits = append(edits, e)
		}
	}
	return edits
}

// pluralEdit turns the last word of a name, or the word before " of "
// ("sticks of incense"), singular (toOne) or plural, simply:
// daggers/dagger, torches/torch, berries/berry.
func pluralEdit(s string, start, end int, toOne bool) (edit, bool) {
	if k := strings.Index(strings.ToLower(s[start:end]), " of "); k > 0 {
		end = start + k
	}
	b := end
	for b > start && isLetter(s[b-1]) {
		b--
	}
	w := s[b:end]
	if len(w) < 2 {
		return edit{}, false
	}
	lw := strings.ToLower(w)
	upper := w[len(w)-1] >= 'A' && w[len(w)-1] <= 'Z'
	suf := func(t string) string {
		if upper {
			return strings.ToUpper(t)
		}
		return t
	}
	if toOne {
		switch {
		case len(lw) > 4 && strings.HasSuffix(lw, "ies"):
			return edit{end - 3, end, suf("y")}, true
		case strings.HasSuffix(lw, "ches") || strings.HasSuffix(lw, "shes") || strings.HasSuffix(lw, "sses") || strings.HasSuffix(lw, "zzes"):
			return edit{end - 2, end, ""}, true
		case len(lw) > 3 && strings.HasSuffix(lw, "s") && !strings.HasSuffix(lw, "ss") && !strings.HasSuffix(lw, "us") && !strings.HasSuffix(lw, "is"):
			return edit{end - 1, end, ""}, true
		}
		return edit{}, false
	}
	switch {
	case strings.HasSuffix(lw, "s"):
		return edit{}, false
	case strings.HasSuffix(lw, "x") || strings.HasSuffix(lw, "z") || strings.HasSuffix(lw, "ch") || strings.HasSuffix(lw, "sh"):
		return edit{end, end, suf("es")}, true
	case len(lw) > 2 && strings.HasSuffix(lw, "y") && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		return edit{end - 1, end, suf("ies")}, true
	}
	return edit{end, end, suf("s")}, true
}

func itoa(n int) string { return strconv.Itoa(n) }

func withCommas(n int) string {
	s := itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// coinDenom returns the denomination a word names, or "".
func coinDenom(w string) string {
	switch w {
	case "gp", "gold":
		return "gp"
	case "sp", "silver":
		return "sp"
	case "cp", "copper":
		return "cp"
	case "ep", "electrum":
		return "ep"
	case "pp", "platinum":
		return "pp"
	}
	return ""
}

// normLabel reduces a table cell or key to its words: no emphasis, no
// colon, lower case.
func normLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '*', '_', '`':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimSuffix(s, ":"))
	return strings.Join(strings.Fields(s), " ")
}

// abilityIndex returns the index in Abilities of an ability's normalized
// name, or -1.
func abilityIndex(s string) int {
	switch s {
	case "str", "strength":
		return 0
	case "dex", "dexterity":
		return 1
	case "con", "constitution":
		return 2
	case "int", "intelligence":
		return 3
	case "wis", "wisdom":
		return 4
	case "cha", "charisma":
		return 5
	}
	return -1
}
