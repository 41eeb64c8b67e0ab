package sheet

import (
	"fmt"
	"strings"
)

// tables holds where a tables-layout sheet writes each value.
type tables struct {
	hp, max  span // max is not ok when one number gives both
	level    span
	abil     [6]span
	modParen [6]span // "(+2)" beside a score
	modRow   [6]span // a row of modifiers under the scores
	items    []tItem // parallel to Sheet.Items
	coins    []tCoin // parallel to Sheet.Currency
	eq       section // ## Equipment
	pack     section // ### Pack Contents within it
	cur      section // ### Currency
	marker   byte    // the bullet the items use
}

// section is a heading and what follows it.
type section struct {
	found      bool
	name       string
	headNext   int // the offset after the heading line
	contentEnd int // the offset after the section's last non-blank line
	lastItem   int // the index of its last item, -1 when none
}

// tItem is where an item is written: its lines (with the lines indented
// under it) and its text on the first line.
type tItem struct {
	start, end   int
	text, textTo int
	tx           itemText
}

// tCoin is where an amount is written, and where its denomination ends.
type tCoin struct {
	amount span
	end    int
}

func (p *parsed) parseTables(from int) error {
	t := &tables{marker: '-'}
	t.eq.lastItem, t.pack.lastItem, t.cur.lastItem = -1, -1, -1
	p.t = t
	var (
		inComment, inEq, inPack, inCur bool
		fence                          string
		eqLevel                        int
		sectionName                    string
		curItem                        = -1
		contentCol                     int
		hpDone, levelDone, abilDone    bool
		vAbil                          [6]span
		vMod                           [6]span
		vScore, vLine                  [6]int
		coinLine                       = map[string]int{}
	)
	n := len(p.ls)
	for i := from; i < n; i++ {
		line := p.text(i)
		at := p.ls[i]
		ind := indentWidth(line)
		trim := strings.TrimLeft(line, " \t")
		switch {
		case inComment:
			inComment = !strings.Contains(line, "-->")
			continue
		case fence != "":
			if ind <= 3 && strings.HasPrefix(trim, fence) && strings.Trim(trim, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		case ind <= 3 && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")):
			k := 0
			for k < len(trim) && trim[k] == trim[0] {
				k++
			}
			fence = trim[:k]
			continue
		case ind <= 3 && strings.HasPrefix(trim, "<!--") && !strings.Contains(trim[4:], "-->"):
			inComment = true
			continue
		}
		blank := strings.TrimSpace(line) == ""
		if lvl, htext, ok := heading(line); ok {
			curItem, inCur, inPack = -1, false, false
			if inEq && lvl <= eqLevel {
				inEq = false
			}
			nt := normLabel(htext)
			head := section{found: true, name: htext, headNext: p.next(i), contentEnd: p.next(i), lastItem: -1}
			switch {
			case !t.eq.found && lvl <= 2 && (strings.Contains(nt, "equipment") || strings.Contains(nt, "inventory")):
				t.eq, inEq, eqLevel, sectionName = head, true, lvl, ""
			case !t.cur.found && (strings.Contains(nt, "currency") || nt == "money" || nt == "coins" || nt == "wealth" || nt == "purse"):
				t.cur, inCur = head, true
			case inEq:
				sectionName = htext
				if !t.pack.found && strings.Contains(nt, "pack") {
					t.pack, inPack = head, true
				}
			}
			if inEq {
				t.eq.contentEnd = p.next(i)
			}
			continue
		}
		if !blank {
			if inEq {
				t.eq.contentEnd = p.next(i)
			}
			if inPack {
				t.pack.contentEnd = p.next(i)
			}
			if inCur {
				t.cur.contentEnd = p.next(i)
			}
		}
		if inCur {
			for _, c := range findCoins(line) {
				if c.n > MaxAmount {
					return p.errf(i+1, "currency", "%d %s is %w: at most %d", c.n, c.denom, ErrRange, MaxAmount)
				}
				if l, ok := coinLine[c.denom]; ok {
					return p.errf(i+1, "currency", "%s written twice, on lines %d and %d", c.denom, l, i+1)
				}
				coinLine[c.denom] = i + 1
				p.sh.Currency = append(p.sh.Currency, Coin{Denom: c.denom, Amount: c.n})
				t.coins = append(t.coins, tCoin{amount: span{at + c.amount.start, at + c.amount.end}, end: at + c.end})
			}
			continue
		}
		// Values: table rows and "**Label**: value" lines.
		var label string
		var val span
		if strings.HasPrefix(trim, "|") {
			cells := splitRow(line)
			if isSepRow(line, cells) {
				continue
			}
			header := i+1 < n && isSepRow(p.text(i+1), splitRow(p.text(i+1)))
			if header && !abilDone {
				if cols, count := abilityCols(line, cells); count >= 3 {
					abilDone = true
					if err := p.abilityTable(i, cols); err != nil {
						return err
					}
					continue
				}
			}
			if !header && len(cells) >= 2 {
				label, val = normLabel(line[cells[0].start:cells[0].end]), span{at + cells[1].start, at + cells[1].end}
			}
		} else if l, v, ok := boldValue(line); ok {
			label, val = l, span{at + v.start, at + v.end}
		}
		switch {
		case label == "":
		case label == "hit points" || label == "hp" || label == "hit points (hp)":
			if hpDone {
				break
			}
			hpDone = true
			if err := p.hpValue(i, val); err != nil {
				return err
			}
		case label == "level" || label == "character level":
			if levelDone {
				break
			}
			levelDone = true
			if err := p.levelValue(i, val); err != nil {
				return err
			}
		case abilityIndex(label) >= 0 && strings.HasPrefix(trim, "|"):
			a := abilityIndex(label)
			if vLine[a] == 0 {
				if sc, ss, ms, ok := parseScore(string(p.data[val.start:val.end])); ok {
					vScore[a], vLine[a] = sc, i+1
					vAbil[a] = span{val.start + ss.start, val.start + ss.end}
					if ms.ok() {
						vMod[a] = span{val.start + ms.start, val.start + ms.end}
					}
				}
			}
		}
		// Items: the bullets of the Equipment section.
		if !inEq {
			continue
		}
		if blank {
			continue
		}
		if curItem >= 0 && ind >= contentCol {
			t.items[curItem].end = p.next(i)
			continue
		}
		curItem = -1
		marker, textAt, col, ok := bullet(line)
		if !ok || ind > 3 {
			continue
		}
		text := strings.TrimRight(line[textAt:], " \t")
		if strings.Trim(text, "-*_ \t") == "" {
			continue
		}
		tx := parseItemText(text)
		if tx.qty > MaxAmount {
			return p.errf(i+1, "items", "%d is %w: at most %d", tx.qty, ErrRange, MaxAmount)
		}
		curItem, contentCol, t.marker = len(t.items), col, marker
		t.items = append(t.items, tItem{start: at, end: p.next(i), text: at + textAt, textTo: at + textAt + len(text), tx: tx})
		name := text[tx.nameStart:tx.nameEnd]
		p.sh.Items = append(p.sh.Items, Item{Name: name, Slug: kebab(name), Quantity: tx.qty, Section: sectionName, Note: tx.note, Line: i + 1})
		t.eq.lastItem = curItem
		if inPack {
			t.pack.lastItem = curItem
		}
	}
	if !hpDone {
		return &Error{Path: p.path, Err: fmt.Errorf("%w: want a \"| **Hit Points** | 8/8 |\" row, or hp and max_hp in the frontmatter", ErrNoHP)}
	}
	if !abilDone && vLine != [6]int{} && !containsZero(vLine) {
		for a := range vLine {
			if vScore[a] < 1 || vScore[a] > 30 {
				return p.errf(vLine[a], AbilityNames[a], "%d is %w: want 1 to 30", vScore[a], ErrRange)
			}
		}
		t.abil, t.modParen, p.sh.Abilities, p.haveAbil, p.abilLine = vAbil, vMod, vScore, true, vLine[0]
	}
	return nil
}

func containsZero(a [6]int) bool {
	for _, v := range a {
		if v == 0 {
			return true
		}
	}
	return false
}

// hpValue reads "8/8" (current/max) or "8" (both) in the span val of line i.
func (p *parsed) hpValue(i int, val span) error {
	t := p.t
	p.hpLine = i + 1
	s := string(p.data[val.start:val.end])
	a, b := stripEmphasis(s)
	v := s[a:b]
	k := digitsEnd(v, 0)
	bad := func() error {
		if strings.TrimSpace(s) == "" {
			return p.errf(i+1, "hit points", "empty: want current/max, like 8/12")
		}
		return p.errf(i+1, "hit points", "%q is not a number", strings.TrimSpace(s))
	}
	if k == 0 {
		return bad()
	}
	hp := span{val.start + a, val.start + a + k}
	j := skipSpaces(v, k)
	var mx span
	if j < len(v) && v[j] == '/' {
		j = skipSpaces(v, j+1)
		e := digitsEnd(v, j)
		if e == j {
			return bad()
		}
		mx = span{val.start + a + j, val.start + a + e}
		k = e
	}
	if k < len(v) && !isSpace(v[k]) && v[k] != '(' {
		return bad()
	}
	if hp.end-hp.start > 9 || mx.end-mx.start > 9 {
		return p.errf(i+1, "hit points", "%s is %w: at most %d", strings.TrimSpace(s), ErrRange, MaxAmount)
	}
	t.hp, t.max = hp, mx
	p.sh.HP = atoi(p.data[hp.start:hp.end])
	p.sh.MaxHP = p.sh.HP
	if mx.ok() {
		p.sh.MaxHP = atoi(p.data[mx.start:mx.end])
	}
	if p.sh.MaxHP < 1 {
		return p.errf(i+1, "max hit points", "%d is %w: want at least 1", p.sh.MaxHP, ErrRange)
	}
	if p.sh.HP > p.sh.MaxHP {
		return p.errf(i+1, "hit points", "%d is %w: want 0 to %d, the maximum", p.sh.HP, ErrRange, p.sh.MaxHP)
	}
	return nil
}

// levelValue reads a level, 1 to 20, in the span val of line i.
func (p *parsed) levelValue(i int, val span) error {
	p.levelLine = i + 1
	s := string(p.data[val.start:val.end])
	a, b := stripEmphasis(s)
	v := s[a:b]
	k := digitsEnd(v, 0)
	if k == 0 || k < len(v) && !isSpace(v[k]) && v[k] != '(' {
		return p.errf(i+1, "level", "%q is not a number", strings.TrimSpace(s))
	}
	if k > 2 {
		return p.errf(i+1, "level", "%s is %w: want 1 to 20", v[:k], ErrRange)
	}
	n := atoi([]byte(v[:k]))
	if n < 1 || n > 20 {
		return p.errf(i+1, "level", "%d is %w: want 1 to 20", n, ErrRange)
	}
	p.t.level = span{val.start + a, val.start + a + k}
	p.sh.Level = n
	return nil
}

// abilityTable reads the ability table whose header is line i.
func (p *parsed) abilityTable(i int, cols [6]int) error {
	t := p.t
	var missing []string
	for a, c := range cols {
		if c < 0 {
			missing = append(missing, AbilityNames[a])
		}
	}
	switch {
	case len(missing) == 1:
		return p.errf(i+1, "abilities", "the table has no %s column", missing[0])
	case len(missing) > 1:
		return p.errf(i+1, "abilities", "the table has no %s columns", strings.Join(missing, ", "))
	}
	j := i + 2
	if j >= len(p.ls) || !strings.HasPrefix(strings.TrimLeft(p.text(j), " \t"), "|") {
		return p.errf(i+1, "abilities", "no row of scores under the table's header")
	}
	line, at := p.text(j), p.ls[j]
	cells := splitRow(line)
	var scores Abilities
	for a, c := range cols {
		if c >= len(cells) {
			return p.errf(j+1, AbilityNames[a], "the row of scores has no %s cell", AbilityNames[a])
		}
		cell := line[cells[c].start:cells[c].end]
		sc, ss, ms, ok := parseScore(cell)
		if !ok {
			return p.errf(j+1, AbilityNames[a], "%q is not a number", strings.TrimSpace(cell))
		}
		if sc < 1 || sc > 30 {
			return p.errf(j+1, AbilityNames[a], "%d is %w: want 1 to 30", sc, ErrRange)
		}
		scores[a] = sc
		t.abil[a] = span{at + cells[c].start + ss.start, at + cells[c].start + ss.end}
		if ms.ok() {
			t.modParen[a] = span{at + cells[c].start + ms.start, at + cells[c].start + ms.end}
		}
	}
	if k := j + 1; k < len(p.ls) && strings.HasPrefix(strings.TrimLeft(p.text(k), " \t"), "|") {
		line, at := p.text(k), p.ls[k]
		cells := splitRow(line)
		var mods [6]span
		signed, ok := false, true
		for a, c := range cols {
			if c >= len(cells) {
				continue // a short row: the modifiers it has still follow
			}
			cell := line[cells[c].start:cells[c].end]
			ms, sign, good := parseMod(cell)
			if !good {
				ok = false
				break
			}
			signed = signed || sign
			mods[a] = span{at + cells[c].start + ms.start, at + cells[c].start + ms.end}
		}
		if ok && signed {
			t.modRow = mods
		}
	}
	p.sh.Abilities, p.haveAbil, p.abilLine = scores, true, j+1
	return nil
}

// abilityCols returns the column of each ability in a header row, -1 when
// absent, and how many abilities it names.
func abilityCols(line string, cells []span) ([6]int, int) {
	cols := [6]int{-1, -1, -1, -1, -1, -1}
	count := 0
	for ci, c := range cells {
		if a := abilityIndex(normLabel(line[c.start:c.end])); a >= 0 && cols[a] < 0 {
			cols[a] = ci
			count++
		}
	}
	return cols, count
}

// parseScore reads "15" or "15 (+2)", with optional emphasis, returning
// the score and the spans of the score and the modifier within s.
func parseScore(s string) (score int, ss, ms span, ok bool) {
	a, b := stripEmphasis(s)
	v := s[a:b]
	k := digitsEnd(v, 0)
	if k == 0 || k > 3 {
		return 0, span{}, span{}, false
	}
	score = atoi([]byte(v[:k]))
	ss = span{a, a + k}
	j := skipSpaces(v, k)
	if j < len(v) && v[j] == '(' {
		j = skipSpaces(v, j+1)
		m, _, good := parseSigned(v, j)
		if !good {
			return 0, span{}, span{}, false
		}
		ms = span{a + j, a + m}
		j = skipSpaces(v, m)
		if j >= len(v) || v[j] != ')' {
			return 0, span{}, span{}, false
		}
		j = skipSpaces(v, j+1)
	}
	if j != len(v) {
		return 0, span{}, span{}, false
	}
	return score, ss, ms, true
}

// parseMod reads a modifier cell: "+2", "-1", "−1" or "0".
func parseMod(s string) (ms span, signed, ok bool) {
	a, b := stripEmphasis(s)
	v := s[a:b]
	e, sign, good := parseSigned(v, 0)
	if !good || e != len(v) {
		return span{}, false, false
	}
	return span{a, a + e}, sign, true
}

// parseSigned reads [+-−]digits at s[j:], returning where it ends and
// whether it had a sign.
func parseSigned(s string, j int) (end int, signed, ok bool) {
	switch {
	case strings.HasPrefix(s[j:], "−"):
		j += len("−")
		signed = true
	case j < len(s) && (s[j] == '+' || s[j] == '-'):
		j++
		signed = true
	}
	e := digitsEnd(s, j)
	if e == j || e-j > 2 {
		return 0, false, false
	}
	return e, signed, true
}

func fmtMod(m int, old string) string {
	switch {
	case m < 0 && strings.HasPrefix(old, "−"):
		return "−" + itoa(-m)
	case m < 0:
		return itoa(m)
	case old != "" && (old[0] == '+' || old[0] == '-' || strings.HasPrefix(old, "−")):
		return "+" + itoa(m)
	case old != "":
		return itoa(m)
	}
	return "+" + itoa(m)
}

// stripEmphasis returns the bounds of s without surrounding spaces and
// "*" or "_".
func stripEmphasis(s string) (int, int) {
	a, b := 0, len(s)
	for a < b && (isSpace(s[a]) || s[a] == '*' || s[a] == '_') {
		a++
	}
	for b > a && (isSpace(s[b-1]) || s[b-1] == '*' || s[b-1] == '_') {
		b--
	}
	return a, b
}

func digitsEnd(s string, j int) int {
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j
}

func skipSpaces(s string, j int) int {
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j
}

// atoi reads at most nine digits.
func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}

func indentWidth(line string) int {
	w := 0
	for _, c := range []byte(line) {
		switch c {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w
		}
	}
	return w
}

// heading reads an ATX heading: its level and text.
func heading(line string) (int, string, bool) {
	if indentWidth(line) > 3 {
		return 0, "", false
	}
	s := strings.TrimLeft(line, " ")
	lvl := 0
	for lvl < len(s) && s[lvl] == '#' {
		lvl++
	}
	if lvl == 0 || lvl > 6 || lvl < len(s) && !isSpace(s[lvl]) {
		return 0, "", false
	}
	text := strings.TrimSpace(s[lvl:])
	if t := strings.TrimRight(text, "#"); t != text && (t == "" || isSpace(t[len(t)-1])) {
		text = strings.TrimSpace(t)
	}
	return lvl, text, true
}

// bullet reads a list item's marker, where its text starts and the
// column its continuation lines are indented to.
func bullet(line string) (marker byte, textAt, col int, ok bool) {
	k := 0
	for k < len(line) && isSpace(line[k]) {
		k++
	}
	if k >= len(line) || !strings.ContainsRune("-*+", rune(line[k])) || k+1 < len(line) && !isSpace(line[k+1]) {
		return 0, 0, 0, false
	}
	j := skipSpaces(line, k+1)
	ind := indentWidth(line)
	col = ind + 1 + (j - k - 1)
	if j-k-1 > 4 || j == len(line) {
		col = ind + 2
	}
	return line[k], j, col, true
}

// boldValue reads "**Label**: value" (or "**Label:** value"), optionally
// a list item.
func boldValue(line string) (string, span, bool) {
	k := skipSpaces(line, 0)
	if k+1 < len(line) && (line[k] == '-' || line[k] == '*' || line[k] == '+') && isSpace(line[k+1]) {
		k = skipSpaces(line, k+1)
	}
	if !strings.HasPrefix(line[k:], "**") {
		return "", span{}, false
	}
	e := strings.Index(line[k+2:], "**")
	if e < 0 {
		return "", span{}, false
	}
	raw := line[k+2 : k+2+e]
	after := k + 2 + e + 2
	colon := strings.HasSuffix(strings.TrimSpace(raw), ":")
	if !colon && after < len(line) && line[after] == ':' {
		after++
		colon = true
	}
	if !colon {
		return "", span{}, false
	}
	a := skipSpaces(line, after)
	b := len(line)
	for b > a && isSpace(line[b-1]) {
		b--
	}
	return normLabel(raw), span{a, b}, true
}

// splitRow splits a table row into its cells' spans, trimmed of spaces.
func splitRow(line string) []span {
	k := skipSpaces(line, 0)
	if k >= len(line) || line[k] != '|' {
		return nil
	}
	var cells []span
	start := k + 1
	for j := start; j <= len(line); j++ {
		if j < len(line) && (line[j] != '|' || line[j-1] == '\\') {
			continue
		}
		a, b := start, j
		for a < b && isSpace(line[a]) {
			a++
		}
		for b > a && isSpace(line[b-1]) {
			b--
		}
		cells = append(cells, span{a, b})
		start = j + 1
	}
	if strings.HasSuffix(strings.TrimRight(line, " \t"), "|") && len(cells) > 0 {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// isSepRow reports whether a row is a table's separator: |---|:---:|.
func isSepRow(line string, cells []span) bool {
	if len(cells) == 0 {
		return false
	}
	for _, c := range cells {
		s := strings.TrimSuffix(strings.TrimPrefix(line[c.start:c.end], ":"), ":")
		if s == "" || strings.Trim(s, "-") != "" {
			return false
		}
	}
	return true
}

// coinAt is an amount of coins found in a line.
type coinAt struct {
	amount span // the digits
	end    int  // after the denomination
	denom  string
	n      int
}

// findCoins finds "15 gp", "3 silver", "1,200 gold pieces" in a line.
func findCoins(line string) []coinAt {
	var out []coinAt
	for k := 0; k < len(line); k++ {
		if !isDigit(line[k]) || k > 0 && (isDigit(line[k-1]) || isLetter(line[k-1]) || line[k-1] == ',' || line[k-1] == '.') {
			continue
		}
		j, n, digits := k, 0, 0
		for j < len(line) && (isDigit(line[j]) || line[j] == ',' && j+1 < len(line) && isDigit(line[j+1])) {
			if line[j] != ',' {
				digits++
				if digits <= 10 {
					n = n*10 + int(line[j]-'0')
				}
			}
			j++
		}
		if digits > 10 {
			n = MaxAmount + 1
		}
		w := skipSpaces(line, j)
		e := w
		for e < len(line) && isLetter(line[e]) {
			e++
		}
		d := coinDenom(strings.ToLower(line[w:e]))
		if d == "" {
			k = j - 1
			continue
		}
		end := e
		if p := skipSpaces(line, e); p < len(line) {
			q := p
			for q < len(line) && isLetter(line[q]) {
				q++
			}
			if w := strings.ToLower(line[p:q]); w == "pieces" || w == "piece" {
				end = q
			}
		}
		out = append(out, coinAt{amount: span{k, j}, end: end, denom: d, n: n})
		k = end - 1
	}
	return out
}

// Edits.

func (t *tables) hpEdits(p *parsed, hp, maxHP int) []edit {
	if !t.max.ok() {
		text := itoa(hp)
		if hp != maxHP {
			text += "/" + itoa(maxHP)
		}
		return []edit{{t.hp.start, t.hp.end, text}}
	}
	var e []edit
	if hp != p.sh.HP {
		e = append(e, edit{t.hp.start, t.hp.end, itoa(hp)})
	}
	if maxHP != p.sh.MaxHP {
		e = append(e, edit{t.max.start, t.max.end, itoa(maxHP)})
	}
	return e
}

func (t *tables) abilityEdits(p *parsed, i, n int) []edit {
	e := []edit{{t.abil[i].start, t.abil[i].end, itoa(n)}}
	m := Modifier(n)
	for _, s := range []span{t.modParen[i], t.modRow[i]} {
		if s.ok() {
			e = append(e, edit{s.start, s.end, fmtMod(m, string(p.data[s.start:s.end]))})
		}
	}
	return e
}

func (t *tables) qtyEdits(p *parsed, i, q int) []edit {
	it := t.items[i]
	edits := it.tx.qtyEdits(string(p.data[it.text:it.textTo]), q)
	for k := range edits {
		edits[k].start += it.text
		edits[k].end += it.text
	}
	return edits
}

// itemLine writes a new item's text, "Name", "N Name" or "Name (xN)",
// with " — note", and returns how it reads.
func itemLine(name string, q int, note string) (string, Item) {
	read := func(text string) Item {
		tx := parseItemText(text)
		n := text[tx.nameStart:tx.nameEnd]
		return Item{Name: n, Slug: kebab(n), Quantity: tx.qty, Note: tx.note}
	}
	suffix := ""
	if note != "" {
		suffix = " — " + note
	}
	text := name + suffix
	if q > 1 {
		text = itoa(q) + " " + name + suffix
		if it := read(text); it.Quantity != q || slugKey(it.Slug) != slugKey(Slug(name)) {
			text = name + " (x" + itoa(q) + ")" + suffix
		}
	}
	return text, read(text)
}

func (t *tables) addEdits(p *parsed, name string, q int, note string) (edit, Item) {
	text, want := itemLine(name, q, note)
	line := string(t.marker) + " " + text + p.nl
	switch {
	case t.pack.found:
		want.Section = t.pack.name
		pos := t.pack.headNext
		if t.pack.lastItem >= 0 {
			pos = t.items[t.pack.lastItem].end
		}
		return p.insertLines(pos, line), want
	case t.eq.found && t.eq.lastItem >= 0:
		want.Section = p.sh.Items[t.eq.lastItem].Section
		return p.insertLines(t.items[t.eq.lastItem].end, line), want
	case t.eq.found:
		want.Section = "Pack Contents"
		li := p.lineOf(t.eq.headNext)
		if t.eq.headNext == len(p.data) {
			li = len(p.ls)
		}
		for li < len(p.ls) && strings.TrimSpace(p.text(li)) == "" {
			li++
		}
		pos, tail := len(p.data), ""
		if li < len(p.ls) {
			pos, tail = p.ls[li], p.nl
		}
		return p.insertLines(pos, "### Pack Contents"+p.nl+line+tail), want
	}
	want.Section = "Pack Contents"
	return p.appendSection("## Equipment" + p.nl + p.nl + "### Pack Contents" + p.nl + line), want
}

// appendSection returns an edit adding text at the end of the file,
// after a blank line.
func (p *parsed) appendSection(text string) edit {
	d := p.data
	switch {
	case len(d) == 0:
	case d[len(d)-1] != '\n':
		text = p.nl + p.nl + text
	case len(d) >= 2 && d[len(d)-2] == '\n' || len(d) >= 3 && string(d[len(d)-3:]) == "\n\r\n":
	default:
		text = p.nl + text
	}
	return edit{len(d), len(d), text}
}

func (t *tables) coinEdits(p *parsed, denom string, at, n int) edit {
	if at >= 0 {
		c := t.coins[at]
		text := itoa(n)
		if strings.Contains(string(p.data[c.amount.start:c.amount.end]), ",") {
			text = withCommas(n)
		}
		return edit{c.amount.start, c.amount.end, text}
	}
	coin := itoa(n) + " " + denom
	switch {
	case len(t.coins) > 0:
		end := t.coins[len(t.coins)-1].end
		return edit{end, end, ", " + coin}
	case t.cur.found:
		return p.insertLines(t.cur.contentEnd, coin+p.nl)
	case t.eq.found:
		return p.insertLines(t.eq.contentEnd, p.nl+"### Currency"+p.nl+coin+p.nl)
	}
	return p.appendSection("## Equipment" + p.nl + p.nl + "### Currency" + p.nl + coin + p.nl)
}
