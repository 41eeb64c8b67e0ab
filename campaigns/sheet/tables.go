package sheet

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/parley-dev/parley/internal/markdown"
	"github.com/parley-dev/parley/internal/spell"
)

// tables holds where a tables-layout sheet writes each value.
type tables struct {
	hp, max span // max: the maximum beside hp ("8/12", "8 (max 12)"), not ok when not written there
	maxRow  span // a "| **Max HP** | 12 |" row's number, not ok when none
	temp    span // the number of "(temp 3)" after the hit points, not ok when none
	tempAt  span // all of " (temp 3)", the space before it too
	// A "| **Temp HP** | 3 |" row: its number, or its "-" (not ok when
	// the cell is empty), where the cell's value starts (-1 when there is
	// no such row), what it says, and its 1-based line.
	tempRow   span
	tempRowAt int
	tempRowN  int
	tempLine  int
	hpEnd     int    // where the reading of the hit points ends: after "8/12", "8 (max 12)"
	maxLine   int    // 1-based line of maxRow
	level     span   // the level's digits and any ordinal suffix ("3rd")
	levelOrd  string // the ordinal suffix as written ("rd"), "" when none
	abil      [6]span
	modParen  [6]span // "(+2)" beside a score
	modRow    [6]span // a row of modifiers under the scores
	items     []tItem // parallel to Sheet.Items
	coins     []tCoin // parallel to Sheet.Currency
	eq        section // ## Equipment
	pack      section // ### Pack Contents within it
	cur       section // ### Currency
	marker    byte    // the bullet the items use
	// slot is the part of the Equipment section a new item goes in when
	// there is no Pack Contents and no item yet: the first of its
	// subsections that holds items (not notes, not money) and names gear
	// in general ("Worn/Carried", "Gear"), else the first such.
	slot section
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
	col          int // the column its text starts at: lines indented to it belong to it
}

func (p *parsed) parseTables(from int) error {
	t := &tables{marker: '-', tempRowAt: -1}
	t.eq.lastItem, t.pack.lastItem, t.cur.lastItem = -1, -1, -1
	p.t = t
	var (
		inComment, inEq, inPack, inCur bool
		notItems                       bool // in Equipment, under notes (Limitations, Notes): not items
		fence                          string
		eqLevel                        int
		sectionName                    string
		open                           []int // the items a more indented line would be in, outermost first
		hpDone, maxDone, tempDone      bool
		levelDone, abilDone            bool
		cs                             = curState{seen: map[string]int{}}
		vAbil                          [6]span
		vMod                           [6]span
		vScore, vLine                  [6]int
	)
	var meant, tempMeant struct {
		line    int    // 1-based line of a label that is "Hit Points" (or "Temp HP") misspelt, or of such a row without its value cell
		written string // the label as written there
		value   string // in a row without its value cell, what follows the label; "" else
	}
	var levelMeant error // a level row without its value cell, or a label that is Level misspelt
	var levelTypo struct {
		line    int    // 1-based line of the first label that is Level misspelt
		written string // the label as written there
	}
	var maxMeant error // a Max HP row without its value cell
	var vBad [6]error  // an ability's row whose score cannot be read, or without its value cell
	n := len(p.ls)
	for i := from; i < n; i++ {
		line := p.text(i)
		at := p.ls[i]
		ind := markdown.Indent(line)
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
			open, inCur, inPack = nil, false, false
			if inEq && lvl <= eqLevel {
				inEq = false
			}
			nt := normLabel(htext)
			head := section{found: true, name: htext, headNext: p.next(i), contentEnd: p.next(i), lastItem: -1}
			switch {
			case !t.eq.found && lvl <= 2 && (strings.Contains(nt, "equipment") || strings.Contains(nt, "inventory")):
				t.eq, inEq, eqLevel, sectionName, notItems = head, true, lvl, "", false
			case !t.cur.found && (strings.Contains(nt, "currency") || nt == "money" || nt == "coins" || nt == "wealth" || nt == "purse"):
				t.cur, inCur = head, true
			case inEq:
				sectionName = htext
				notItems = notesLabel(nt)
				if !t.pack.found && strings.Contains(nt, "pack") {
					t.pack, inPack = head, true
				}
				if !notItems && (!t.slot.found || !gearLabel(normLabel(t.slot.name)) && gearLabel(nt)) {
					t.slot = head
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
			// Money the package cannot read does not stop the rest of the
			// sheet: it is reported in Unread, and SetCurrency refuses.
			if p.curErr == nil {
				p.curErr = p.currencyLine(i, &cs)
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
			if !header && len(cells) == 1 {
				// "| **Level** 1 |": a label and no value cell.
				if l, v, ok := boldCell(line[cells[0].start:cells[0].end]); ok {
					switch b := hpLabel(normLabel(l)); {
					case !hpDone && meant.line == 0 && (b == "hit points" || b == "hp"):
						meant.line, meant.written, meant.value = i+1, l, v
					case !levelDone && levelMeant == nil && (b == "level" || b == "character level"):
						levelMeant = p.errf(i+1, "level", "%s", p.brokenRow(i, "**"+l+"**", v))
					case !tempDone && tempMeant.line == 0 && isTempHPLabel(b):
						tempMeant.line, tempMeant.written, tempMeant.value = i+1, l, v
					case !maxDone && maxMeant == nil && isMaxHPLabel(b):
						maxMeant = p.errf(i+1, "max hit points", "%s", p.brokenRow(i, "**"+l+"**", v))
					case abilityIndex(normLabel(l)) >= 0:
						if a := abilityIndex(normLabel(l)); vLine[a] == 0 && vBad[a] == nil {
							vBad[a] = p.errf(i+1, AbilityNames[a], "%s", p.brokenRow(i, "**"+l+"**", v))
						}
					}
				} else if l, v, ok := plainAbilityCell(line[cells[0].start:cells[0].end]); ok {
					// "| STR 15 |"
					if a := abilityIndex(normLabel(l)); vLine[a] == 0 && vBad[a] == nil {
						vBad[a] = p.errf(i+1, AbilityNames[a], "%s", p.brokenRow(i, l, v))
					}
				}
				continue
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
		case isMaxHPLabel(label):
			if maxDone {
				break
			}
			maxDone = true
			if err := p.maxHPValue(i, val); err != nil {
				return err
			}
		case isTempHPLabel(label):
			if tempDone {
				break
			}
			tempDone = true
			if err := p.tempHPValue(i, val); err != nil {
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
		case !hpDone && meant.line == 0 && spell.Nearest(label, []string{"hit points"}, 2) != "":
			// "Hit Pionts": the hit points, misspelt, if none are found.
			meant.line, meant.written = i+1, writtenLabel(line)
		case levelTypo.line == 0 && spell.Nearest(label, []string{"level"}, 1) != "":
			// "Levle": the level, misspelt; beside a Level row, named too.
			levelTypo.line, levelTypo.written = i+1, writtenLabel(line)
			if !levelDone && levelMeant == nil {
				levelMeant = p.errf(i+1, "level", "%q is no label parley reads: did you mean \"Level\"?", levelTypo.written)
			}
		case abilityIndex(label) >= 0 && strings.HasPrefix(trim, "|"):
			a := abilityIndex(label)
			if vLine[a] == 0 {
				cell := string(p.data[val.start:val.end])
				if sc, ss, ms, ok := parseScore(cell); ok {
					vScore[a], vLine[a], vBad[a] = sc, i+1, nil
					vAbil[a] = span{val.start + ss.start, val.start + ss.end}
					if ms.ok() {
						vMod[a] = span{val.start + ms.start, val.start + ms.end}
					}
				} else if vBad[a] == nil {
					// "| STR | 1O |": read as none, were it not noted.
					ca, cb := stripEmphasis(cell)
					vBad[a] = p.notNumber(i+1, AbilityNames[a], strings.TrimSpace(cell), wordSpan(cell, ca, cb, val.start))
				}
			}
		case !tempDone && tempMeant.line == 0 && spell.Nearest(hpLabel(label), tempHPSpelt, 2) != "":
			// "Tmp HP": the temporary hit points, misspelt.
			tempMeant.line, tempMeant.written = i+1, writtenLabel(line)
		}
		// Items: the bullets of the Equipment section.
		if !inEq {
			continue
		}
		if blank {
			continue
		}
		// A line indented to an open item's text belongs to it: a bullet
		// is an item in it, another line continues it.
		for len(open) > 0 && ind < t.items[open[len(open)-1]].col {
			open = open[:len(open)-1]
		}
		marker, textAt, col, ok := bullet(line)
		if len(open) > 0 && !ok {
			for _, o := range open {
				t.items[o].end = p.next(i)
			}
			continue
		}
		if !ok && ind <= 3 {
			// "**Limitations:**" over a list: notes, until the next
			// heading or the next label that is not one.
			if l, lok := labelLine(trim); lok {
				notItems = notesLabel(l)
			}
		}
		if !ok || ind > 3 && len(open) == 0 || notItems {
			continue
		}
		text := strings.TrimRight(line[textAt:], " \t")
		if strings.Trim(text, "-*_ \t") == "" {
			for _, o := range open {
				t.items[o].end = p.next(i)
			}
			continue
		}
		tx := parseItemText(text)
		if tx.qty > MaxAmount {
			return p.errf(i+1, "items", "%d is %w: at most %d", tx.qty, ErrRange, MaxAmount)
		}
		parent := -1
		if len(open) > 0 {
			parent = open[len(open)-1]
		}
		if len(open) > MaxDepth {
			return p.errf(i+1, "items", "%q is %d lists deep, %w: at most %d", strings.TrimSpace(text), len(open), ErrRange, MaxDepth)
		}
		idx := len(t.items)
		for _, o := range open {
			t.items[o].end = p.next(i)
		}
		if parent < 0 {
			t.marker = marker
		}
		t.items = append(t.items, tItem{start: at, end: p.next(i), text: at + textAt, textTo: at + textAt + len(text), tx: tx, col: col})
		name := text[tx.nameStart:tx.nameEnd]
		p.sh.Items = append(p.sh.Items, Item{Name: name, Slug: kebab(name), Quantity: tx.qty, Section: sectionName, Note: tx.note, Line: i + 1})
		p.parent = append(p.parent, parent)
		open = append(open, idx)
		if parent < 0 {
			t.eq.lastItem = idx
			if inPack {
				t.pack.lastItem = idx
			}
		}
	}
	if !hpDone {
		switch {
		case meant.line > 0 && meant.value != "":
			return p.errf(meant.line, "hit points", "%w: %s", ErrNoHP, p.brokenRow(meant.line-1, "**"+meant.written+"**", meant.value))
		case meant.line > 0:
			return p.errf(meant.line, "hit points", "%w: %q is no label parley reads: did you mean \"Hit Points\"?", ErrNoHP, meant.written)
		case p.frontNoHP != nil:
			return p.frontNoHP
		case p.unclosed:
			return p.errf(1, "frontmatter", "%w: the frontmatter opened with --- on line 1 is never closed: end it with a --- line after its last key", ErrNoHP)
		}
		return &Error{Path: p.path, Err: fmt.Errorf("%w: want a \"| **Hit Points** | 8/8 |\" row, or hp and max_hp in the frontmatter", ErrNoHP)}
	}
	if !maxDone && maxMeant != nil {
		if !t.max.ok() {
			// "| **Hit Points** | 8 |" and a Max HP row that does not
			// read: the maximum is not guessed.
			return maxMeant
		}
		p.noteMeant("max hit points", maxMeant)
	}
	if err := p.checkHP(); err != nil {
		return err
	}
	if !levelDone && levelMeant != nil {
		p.noteMeant("level", levelMeant)
	}
	if levelDone && levelTypo.line > 0 {
		p.noteUnread(p.errf(levelTypo.line, "level", "%q is no label parley reads: the Level on line %d is the one read", levelTypo.written, p.levelLine))
	}
	if !tempDone && tempMeant.line > 0 && tempMeant.value != "" {
		p.noteMeant("temp hit points", p.errf(tempMeant.line, "temp hit points", "%s", p.brokenRow(tempMeant.line-1, "**"+tempMeant.written+"**", tempMeant.value)))
	} else if !tempDone && tempMeant.line > 0 {
		// Temporary hit points are often not written at all: the rest of
		// the sheet reads, and only setting them is refused.
		p.noteMeant("temp hit points", p.errf(tempMeant.line, "temp hit points", "%q is no label parley reads: did you mean \"Temp HP\"?", tempMeant.written))
	}
	if !abilDone && vLine != [6]int{} && !containsZero(vLine) {
		// A score out of range is read, and noted by checkRanges.
		t.abil, t.modParen, p.sh.Abilities, p.haveAbil, p.abilLine, p.abilLines = vAbil, vMod, vScore, true, vLine[0], vLine
	}
	if !abilDone && !p.haveAbil && vLine != [6]int{} && rowsOfSix(vLine, vBad) {
		// Rows of scores of which some do not read: each is named, and
		// SetAbility refuses (it would write scores beside them).
		for _, err := range vBad {
			if err != nil {
				p.noteMeant("abilities", err)
			}
		}
	}
	if p.curErr != nil {
		p.sh.Currency = nil
		p.noteUnread(p.curErr)
	}
	return nil
}

// brokenRow says what is wrong with line i, a table row whose one cell
// holds the label and the value, the | between them missing: "| **Level**
// 1 |". The label is its cell as written, with its emphasis ("**Level**",
// "STR").
func (p *parsed) brokenRow(i int, label, value string) string {
	return fmt.Sprintf("%q is a row with a label and no value cell: want \"| %s | %s |\"", strings.TrimSpace(p.text(i)), label, value)
}

// plainAbilityCell reads a table cell that holds an ability and its score
// with no | between them: "STR 15" is "STR" and "15".
func plainAbilityCell(cell string) (label, value string, ok bool) {
	f := strings.Fields(cell)
	if len(f) < 2 || abilityIndex(normLabel(f[0])) < 0 {
		return "", "", false
	}
	return f[0], strings.Join(f[1:], " "), true
}

// rowsOfSix reports whether every ability has a row, read (line) or not
// (bad), and one at least does not read.
func rowsOfSix(line [6]int, bad [6]error) bool {
	some := false
	for a := range line {
		if line[a] == 0 && bad[a] == nil {
			return false
		}
		some = some || line[a] == 0
	}
	return some
}

// boldCell reads a table cell that holds a bold label and a value with
// no | between them: "**Level** 1" is "Level" and "1". A cell of a label
// and nothing else has the value "N".
func boldCell(cell string) (label, value string, ok bool) {
	if !strings.HasPrefix(cell, "**") {
		return "", "", false
	}
	e := strings.Index(cell[2:], "**")
	if e < 0 {
		return "", "", false
	}
	label = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cell[2:2+e]), ":"))
	value = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cell[2+e+2:]), ":"))
	if value == "" {
		value = "N"
	}
	return label, value, label != ""
}

// writtenLabel returns the label of a table row or a "**Label**: value"
// line as written: "Hit Pionts" for "| **Hit Pionts** | 24 |".
func writtenLabel(line string) string {
	s := strings.TrimLeft(line, " \t|")
	if k := strings.IndexAny(s, "|:"); k >= 0 {
		s = s[:k]
	}
	return strings.Trim(s, " \t*_`-+")
}

func containsZero(a [6]int) bool {
	for _, v := range a {
		if v == 0 {
			return true
		}
	}
	return false
}

// hpValue reads the hit points in the span val of line i: current and
// maximum as "8/12", "8 of 12", "8 out of 12" or "8 (max 12)", or a lone
// number. What follows in parentheses or after a space is a note, unless
// it speaks of a maximum the reading did not take: a maximum is never
// guessed.
func (p *parsed) hpValue(i int, val span) error {
	t := p.t
	p.hpLine = i + 1
	s := string(p.data[val.start:val.end])
	a, b := stripEmphasis(s)
	v := s[a:b]
	hp, mx, rest, ok := splitHP(v)
	if !ok || rest < len(v) && !isSpace(v[rest]) && v[rest] != '(' {
		if strings.TrimSpace(s) == "" {
			return p.errf(i+1, "hit points", "empty: want current/max, like 8/12")
		}
		return p.notNumber(i+1, "hit points", strings.TrimSpace(s), hpWordSpan(v, val.start+a))
	}
	if unclearMax(v[rest:], mx.ok()) {
		return p.errf(i+1, "max hit points", "cannot tell the maximum from %q: want current/max, like 8/12", strings.TrimSpace(s))
	}
	if hp.end-hp.start > 9 || mx.end-mx.start > 9 {
		return p.errf(i+1, "hit points", "%s is %w: at most %d", strings.TrimSpace(s), ErrRange, MaxAmount)
	}
	off := val.start + a
	if n, at, ok := tempPhrase(v, rest); ok {
		if n.end-n.start > 9 {
			return p.errf(i+1, "temp hit points", "%s is %w: at most %d", v[n.start:n.end], ErrRange, MaxAmount)
		}
		t.temp, t.tempAt = span{off + n.start, off + n.end}, span{off + at.start, off + at.end}
		p.sh.TempHP = atoi(p.data[t.temp.start:t.temp.end])
	}
	t.hp = span{off + hp.start, off + hp.end}
	t.hpEnd = off + rest
	p.sh.HP = atoi(p.data[t.hp.start:t.hp.end])
	p.sh.MaxHP = p.sh.HP
	if mx.ok() {
		t.max = span{off + mx.start, off + mx.end}
		p.sh.MaxHP = atoi(p.data[t.max.start:t.max.end])
	}
	return nil
}

// hpWordSpan is where the current hit points go in the hit points v at
// off that do not read: over "three" in "three/8" (the maximum stays), or
// over all of a one-word value ("eight").
func hpWordSpan(v string, off int) span {
	k := strings.IndexByte(v, '/')
	if k < 0 {
		return wordSpan(v, 0, len(v), off)
	}
	j := skipSpaces(v, k+1)
	e := digitsEnd(v, j)
	if e == j || e < len(v) && !isSpace(v[e]) && v[e] != '(' {
		return span{} // "three/eight": the maximum does not read either
	}
	b := k
	for b > 0 && isSpace(v[b-1]) {
		b--
	}
	return wordSpan(v, 0, b, off)
}

// tempPhrase finds temporary hit points written in v[from:], after the
// hit points: "(temp 3)", "(temp: 3)", "(temp hp 3)", "(temporary 3)".
// It returns the number's span and the phrase's, with the spaces before
// it.
func tempPhrase(v string, from int) (n, at span, ok bool) {
	for k := from; k < len(v); k++ {
		if v[k] != '(' {
			continue
		}
		w, e := wordAt(v, skipSpaces(v, k+1))
		if w != "temp" && w != "temporary" {
			continue
		}
		j := skipSpaces(v, e)
		if w2, e2 := wordAt(v, j); w2 == "hp" {
			j = skipSpaces(v, e2)
		}
		if j < len(v) && v[j] == ':' {
			j = skipSpaces(v, j+1)
		}
		d := digitsEnd(v, j)
		c := skipSpaces(v, d)
		if d == j || c >= len(v) || v[c] != ')' {
			continue
		}
		s := k
		for s > from && isSpace(v[s-1]) {
			s--
		}
		return span{j, d}, span{s, c + 1}, true
	}
	return span{}, span{}, false
}

// splitHP reads the current hit points at the start of v and a maximum
// written after them, returning their spans and where the reading ended.
// It fails on a "/" without a number after it.
func splitHP(v string) (hp, mx span, rest int, ok bool) {
	k := digitsEnd(v, 0)
	if k == 0 {
		return span{}, span{}, 0, false
	}
	hp = span{0, k}
	j := skipSpaces(v, k)
	if j < len(v) && v[j] == '/' {
		j = skipSpaces(v, j+1)
		e := digitsEnd(v, j)
		if e == j {
			return span{}, span{}, 0, false
		}
		return hp, span{j, e}, e, true
	}
	if j > k || j < len(v) && (v[j] == ',' || v[j] == '(') {
		if m, e, ok := maxPhrase(v, j); ok {
			return hp, m, e, true
		}
	}
	return hp, span{}, k, true
}

// maxPhrase reads a maximum written at v[j:]: "of 12", "out of 12",
// "(max 12)", "(max: 12)", "(maximum HP 12)", "(of 12)", "(12 max)" or
// ", max 12". It returns the number's span and where the phrase ends.
func maxPhrase(v string, j int) (span, int, bool) {
	number := func(j int) (span, int, bool) {
		e := digitsEnd(v, j)
		return span{j, e}, e, e > j
	}
	// of reads "of" or "out of" and the number after it.
	of := func(j int) (span, int, bool) {
		w, e := wordAt(v, j)
		if w == "out" {
			w, e = wordAt(v, skipSpaces(v, e))
		}
		if w != "of" || e == len(v) || !isSpace(v[e]) {
			return span{}, 0, false
		}
		return number(skipSpaces(v, e))
	}
	// maxWord reads "max", "maximum", "max." with "hp" or "hit points" and
	// a colon, then the number.
	maxWord := func(j int) (span, int, bool) {
		w, e := wordAt(v, j)
		if w != "max" && w != "maximum" {
			return span{}, 0, false
		}
		if e < len(v) && v[e] == '.' {
			e++
		}
		q := skipSpaces(v, e)
		switch w, f := wordAt(v, q); w {
		case "hp":
			e = f
		case "hit":
			if w2, g := wordAt(v, skipSpaces(v, f)); w2 == "points" {
				e = g
			}
		}
		q = skipSpaces(v, e)
		if q < len(v) && v[q] == ':' {
			q = skipSpaces(v, q+1)
		}
		return number(q)
	}
	if m, e, ok := of(j); ok {
		return m, e, true
	}
	if j < len(v) && v[j] == ',' {
		return maxWord(skipSpaces(v, j+1))
	}
	if j >= len(v) || v[j] != '(' {
		return span{}, 0, false
	}
	in := skipSpaces(v, j+1)
	m, e, ok := of(in)
	if !ok {
		m, e, ok = maxWord(in)
	}
	if !ok { // "(12 max)"
		m, e, ok = number(in)
		if ok {
			w, f := wordAt(v, skipSpaces(v, e))
			ok, e = w == "max" || w == "maximum", f
		}
	}
	if !ok {
		return span{}, 0, false
	}
	e = skipSpaces(v, e)
	if e >= len(v) || v[e] != ')' {
		return span{}, 0, false
	}
	return m, e + 1, true
}

// wordAt returns the word of letters at s[j:], lower case, and where it
// ends; "" when no letter is there.
func wordAt(s string, j int) (string, int) {
	e := j
	for e < len(s) && isLetter(s[e]) {
		e++
	}
	return strings.ToLower(s[j:e]), e
}

// unclearMax reports whether what follows the hit points speaks of a
// maximum that was not read: "max" or "maximum" anywhere, and, when no
// maximum was read, a leading "of" ("7 of twelve"), "of 12", "/ 12" or
// another bare number ("12 (14)").
func unclearMax(rest string, haveMax bool) bool {
	for k := 0; k < len(rest); k++ {
		if !isLetter(rest[k]) || k > 0 && isLetter(rest[k-1]) {
			continue
		}
		w, e := wordAt(rest, k)
		switch {
		case w == "max" || w == "maximum":
			return true
		case w == "of" && !haveMax && digitsEnd(rest, skipSpaces(rest, e)) > skipSpaces(rest, e):
			return true
		}
		k = e - 1
	}
	if haveMax {
		return false
	}
	if w, _ := wordAt(rest, skipSpaces(rest, 0)); w == "of" || w == "out" { // "7 of twelve"
		return true
	}
	for k := 0; k < len(rest); k++ {
		if rest[k] == '/' && digitsEnd(rest, skipSpaces(rest, k+1)) > skipSpaces(rest, k+1) {
			return true
		}
	}
	r := strings.TrimLeft(rest, " \t(")
	e := digitsEnd(r, 0)
	return e > 0 && (e == len(r) || isSpace(r[e]) || r[e] == ')')
}

// hpLabel is a normalized label with what does not change its meaning
// taken out: "Max. HP" and "Max HP (HP)" read "max hp".
func hpLabel(label string) string {
	return strings.Join(strings.Fields(strings.NewReplacer(".", " ", "(hp)", " ").Replace(label)), " ")
}

// isMaxHPLabel reports whether a label names the hit point maximum on a
// row of its own: "Max HP", "Maximum Hit Points", "HP Max".
func isMaxHPLabel(label string) bool {
	switch hpLabel(label) {
	case "max hp", "maximum hp", "max hit points", "maximum hit points", "hp max", "hp maximum",
		"hit points max", "hit points maximum", "hit point maximum", "max hit point", "maximum hit point":
		return true
	}
	return false
}

// tempHPLabels are the labels of a row of temporary hit points.
var tempHPLabels = []string{"temp hp", "temporary hp", "temp hit points", "temporary hit points", "hp temp", "thp", "temp hp (thp)"}

// tempHPSpelt are the labels of temporary hit points long enough to tell
// a misspelling of: "Tmp HP", not "CHA".
var tempHPSpelt = tempHPLabels[:4]

// isTempHPLabel reports whether a label names the temporary hit points on
// a row of their own: "Temp HP", "Temporary Hit Points", "THP".
func isTempHPLabel(label string) bool {
	return slices.Contains(tempHPLabels, hpLabel(label))
}

// rowNumber reads the number of a row of its own (Max HP, Temp HP) in the
// span val of line i, and returns its span. With blank, a cell that is
// empty or a dash ("-", "—") is 0, and the span is where the number
// goes: not ok when empty.
func (p *parsed) rowNumber(i int, val span, field string, blank bool) (n int, at span, err error) {
	s := string(p.data[val.start:val.end])
	a, b := stripEmphasis(s)
	v := s[a:b]
	if blank && (v == "" || v == "-" || v == "—" || v == "–") {
		return 0, span{val.start + a, val.start + b}, nil
	}
	k := digitsEnd(v, 0)
	if k == 0 || k < len(v) && !isSpace(v[k]) && v[k] != '(' {
		return 0, span{}, p.notNumber(i+1, field, strings.TrimSpace(s), wordSpan(v, 0, len(v), val.start+a))
	}
	if k > 9 {
		return 0, span{}, p.errf(i+1, field, "%s is %w: at most %d", v[:k], ErrRange, MaxAmount)
	}
	return atoi([]byte(v[:k])), span{val.start + a, val.start + a + k}, nil
}

// maxHPValue reads the number of a Max HP row in the span val of line i.
func (p *parsed) maxHPValue(i int, val span) error {
	_, at, err := p.rowNumber(i, val, "max hit points", false)
	if err != nil {
		return err
	}
	p.t.maxRow = at
	p.t.maxLine = i + 1
	return nil
}

// tempHPValue reads the number of a Temp HP row in the span val of line
// i: a number, or an empty cell or a dash for none.
func (p *parsed) tempHPValue(i int, val span) error {
	n, at, err := p.rowNumber(i, val, "temp hit points", true)
	if err != nil {
		return err
	}
	p.t.tempRow, p.t.tempRowAt, p.t.tempLine = at, at.start, i+1
	p.t.tempRowN = n
	return nil
}

// checkHP takes the maximum from a Max HP row, when there is one, and
// checks the hit points against it; it takes the temporary hit points
// from a Temp HP row, which must agree with a "(temp 3)" after the hit
// points when both are written.
func (p *parsed) checkHP() error {
	t := p.t
	maxLine := p.hpLine
	if t.maxRow.ok() {
		n := atoi(p.data[t.maxRow.start:t.maxRow.end])
		if t.max.ok() && n != p.sh.MaxHP {
			return p.errf(t.maxLine, "max hit points", "line %d says %d and line %d says %d: cannot tell the maximum", p.hpLine, p.sh.MaxHP, t.maxLine, n)
		}
		p.sh.MaxHP, maxLine = n, t.maxLine
	}
	if p.sh.MaxHP < 1 {
		return p.errf(maxLine, "max hit points", "%d is %w: want at least 1", p.sh.MaxHP, ErrRange)
	}
	if t.tempRowAt >= 0 {
		if t.temp.ok() && t.tempRowN != p.sh.TempHP {
			return p.errf(t.tempLine, "temp hit points", "line %d says %d and line %d says %d: cannot tell the temporary hit points", p.hpLine, p.sh.TempHP, t.tempLine, t.tempRowN)
		}
		p.sh.TempHP = t.tempRowN
	}
	p.checkHPRange()
	return nil
}

// checkHPRange notes hit points above the maximum in Sheet.Invalid: a
// sheet a person made so is read, so that setting hp or max_hp can
// right it.
func (p *parsed) checkHPRange() {
	if p.sh.HP > p.sh.MaxHP {
		p.invalid = append(p.invalid, &Error{Path: p.path, Line: p.hpLine, Field: "hit points",
			Err: fmt.Errorf("%d is %w: want 0 to %d, the maximum", p.sh.HP, ErrRange, p.sh.MaxHP)})
	}
}

// levelValue reads a level in the span val of line i: a number, or an
// ordinal ("3rd"). A level outside 1 to 20 (0 too) is read as written,
// and checkRanges notes it in Sheet.Invalid.
func (p *parsed) levelValue(i int, val span) error {
	p.levelLine = i + 1
	s := string(p.data[val.start:val.end])
	a, b := stripEmphasis(s)
	v := s[a:b]
	k := digitsEnd(v, 0)
	e := k
	if k > 0 && k+2 <= len(v) && isOrdinal(v[k:k+2]) {
		e = k + 2
	}
	if k == 0 || e < len(v) && !isSpace(v[e]) && v[e] != '(' {
		return p.notANumber(p.notNumber(i+1, "level", strings.TrimSpace(s), wordSpan(v, 0, len(v), val.start+a)))
	}
	if k > 9 {
		return p.errf(i+1, "level", "%s is %w: want %d to %d", v[:k], ErrRange, MinLevel, MaxLevel)
	}
	p.t.level = span{val.start + a, val.start + a + e}
	p.t.levelOrd = v[k:e]
	p.sh.Level, p.levelSet = atoi([]byte(v[:k])), true
	return nil
}

// isOrdinal reports whether s is an ordinal suffix: st, nd, rd or th in
// any case.
func isOrdinal(s string) bool {
	switch strings.ToLower(s) {
	case "st", "nd", "rd", "th":
		return true
	}
	return false
}

// ordinal writes n with the ordinal suffix, in the case of old ("3rd",
// "3RD").
func ordinal(n int, old string) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	if old != "" && old[0] >= 'A' && old[0] <= 'Z' {
		suf = strings.ToUpper(suf)
	}
	return itoa(n) + suf
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
			ca, cb := stripEmphasis(cell)
			return p.notNumber(j+1, AbilityNames[a], strings.TrimSpace(cell), wordSpan(cell, ca, cb, at+cells[c].start))
		}
		scores[a] = sc // out of range: noted by checkRanges
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
	p.abilLines = [6]int{j + 1, j + 1, j + 1, j + 1, j + 1, j + 1}
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
// the score and the spans of the score and the modifier within s. A score
// outside 1 to 30 is read as written (see checkRanges).
func parseScore(s string) (score int, ss, ms span, ok bool) {
	a, b := stripEmphasis(s)
	v := s[a:b]
	k := digitsEnd(v, 0)
	if k == 0 || k > 9 {
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
	if e == j || e-j > 9 {
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

// notesWords start the names of the parts of an Equipment section that
// hold notes about the gear, not gear: "Limitations", "Notes", "Rules".
var notesWords = []string{"limitation", "restriction", "note", "rule", "proficienc", "attunement", "feature", "trait", "reminder"}

// notesLabel reports whether a normalized heading or label names notes.
func notesLabel(label string) bool {
	for _, w := range notesWords {
		if strings.HasPrefix(label, w) {
			return true
		}
	}
	return false
}

// gearLabel reports whether a normalized heading names gear in general,
// where a person writes any new item: "Worn/Carried", "Gear", "Items".
func gearLabel(label string) bool {
	for _, w := range []string{"carried", "gear", "items", "inventory", "belongings", "possessions", "other"} {
		if strings.Contains(label, w) {
			return true
		}
	}
	return false
}

// labelLine reads a line that is only a label: "**Limitations:**",
// "Notes:", "**Notes**:". It returns the label, normalized.
func labelLine(trim string) (string, bool) {
	s := strings.TrimRight(trim, " \t")
	s = strings.TrimSuffix(strings.TrimSuffix(s, "**"), "__")
	if !strings.HasSuffix(s, ":") {
		return "", false
	}
	s = strings.Trim(strings.TrimSuffix(s, ":"), "*_ ")
	if s == "" || strings.ContainsAny(s, "|[]") || len(strings.Fields(s)) > 4 {
		return "", false
	}
	return normLabel(s), true
}

// heading reads an ATX heading: its level and text.
func heading(line string) (int, string, bool) {
	if markdown.Indent(line) > 3 {
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
	ind := markdown.Indent(line)
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

// Edits.

func (t *tables) hpEdits(p *parsed, hp, maxHP, temp int) []edit {
	var e []edit
	if temp != p.sh.TempHP && t.tempRowAt >= 0 {
		e = append(e, t.tempRowEdit(p, temp))
	}
	switch {
	case temp == p.sh.TempHP:
	case temp == 0 && t.tempAt.ok():
		e = append(e, edit{t.tempAt.start, t.tempAt.end, ""})
	case t.temp.ok():
		e = append(e, edit{t.temp.start, t.temp.end, itoa(temp)})
	case t.tempRowAt < 0: // a Temp HP row says them, else "(temp 3)" does
		e = append(e, edit{t.hpEnd, t.hpEnd, " (temp " + itoa(temp) + ")"})
	}
	if !t.max.ok() && !t.maxRow.ok() { // one number gives both
		if hp == p.sh.HP && maxHP == p.sh.MaxHP {
			return e
		}
		text := itoa(hp)
		if hp != maxHP {
			text += "/" + itoa(maxHP)
		}
		return append(e, edit{t.hp.start, t.hp.end, text})
	}
	if hp != p.sh.HP {
		e = append(e, edit{t.hp.start, t.hp.end, itoa(hp)})
	}
	if maxHP != p.sh.MaxHP {
		for _, s := range []span{t.max, t.maxRow} {
			if s.ok() {
				e = append(e, edit{s.start, s.end, itoa(maxHP)})
			}
		}
	}
	return e
}

// tempRowEdit writes n in the Temp HP row, in place of its number or
// dash; in an empty cell ("|  |", "**Temp HP**:"), with a space on each
// side.
func (t *tables) tempRowEdit(p *parsed, n int) edit {
	if t.tempRow.ok() {
		return edit{t.tempRow.start, t.tempRow.end, itoa(n)}
	}
	at, k := t.tempRowAt, t.tempRowAt
	for k > 0 && (p.data[k-1] == ' ' || p.data[k-1] == '\t') {
		k--
	}
	text := " " + itoa(n)
	if at < len(p.data) && p.data[at] == '|' {
		text += " "
	}
	return edit{k, at, text}
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
	case t.slot.found:
		// An empty part of the sheet for gear (the template's "###
		// Worn/Carried"): the item goes under its heading, as a person
		// writes it there, and a blank line keeps it from what follows.
		want.Section = t.slot.name
		li := p.lineOf(t.slot.headNext)
		if t.slot.headNext < len(p.data) && strings.TrimSpace(p.text(li)) != "" {
			line += p.nl
		}
		return p.insertLines(t.slot.headNext, line), want
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

// addInEdits returns an edit adding a new item in item in: a line after
// the container's last line (its last item's, when it holds some),
// indented and marked as the items directly in it are, or, in an empty
// container, indented to the container's text with its marker.
func (t *tables) addInEdits(p *parsed, in int, name string, q int, note string) (edit, Item) {
	text, want := itemLine(name, q, note)
	want.Section = p.sh.Items[in].Section
	c := t.items[in]
	lead := p.data[c.start:c.text]
	prefix := string(lead[:len(lead)-len(bytes.TrimLeft(lead, " \t"))]) + strings.Repeat(" ", max(c.col-markdown.Indent(string(lead)), 0))
	marker := bytes.TrimSpace(lead)
	if kids := p.children(in); len(kids) > 0 {
		last := t.items[kids[len(kids)-1]]
		lead = p.data[last.start:last.text]
		marker = bytes.TrimSpace(lead)
		prefix = string(lead[:len(lead)-len(bytes.TrimLeft(lead, " \t"))])
	}
	return p.insertLines(c.end, prefix+string(marker)+" "+text+p.nl), want
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
