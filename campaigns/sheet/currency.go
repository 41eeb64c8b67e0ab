package sheet

import (
	"fmt"
	"sort"
	"strings"

	"github.com/parley-dev/parley/internal/spell"
)

// coinCodes are the coins of D&D 5e as a sheet abbreviates them.
var coinCodes = []string{"cp", "sp", "ep", "gp", "pp"}

// misspeltCoin returns the coin code a one-word currency name is, a
// letter more than it and with the same first letter ("gpp" is gp, not
// pp); "" when there is none, and the name is a setting's own money (a
// two-letter one, gc for gold crowns, is one too).
func misspeltCoin(name string) string {
	if len(name) != 3 || strings.Contains(name, " ") {
		return ""
	}
	var same []string
	for _, c := range coinCodes {
		if c[0] == name[0] {
			same = append(same, c)
		}
	}
	return spell.Nearest(name, same, 1)
}

// In the tables layout a Currency section writes coins in any of these
// ways, or in several:
//
//	15 gp, 3 sp               amount first; also "1,500 gold pieces"
//	**Gold**: 10              label first, one a line or "GP: 10, SP: 4"
//	| Gold | 10 |             a row for each coin
//	| GP | SP |               a column for each coin over one row of
//	|----|----|               amounts
//	| 10 | 4  |
//
// "-", "none" or nothing where an amount goes is 0. A line without a
// number is prose ("None yet."); a line with a number that is not an
// amount of coins is an error, so money is never silently dropped.

// coinKind says how a coin is written.
type coinKind int

const (
	amountFirst coinKind = iota // "15 gp"
	labelFirst                  // "**Gold**: 10"
	coinRow                     // "| Gold | 10 |"
	coinColumn                  // a "| GP |" header over a "| 10 |" row
)

// tCoin is where a coin is written. Offsets are into the file.
type tCoin struct {
	kind       coinKind
	start, end int  // the coin: "15 gp", "**Gold**: 10", "Gold | 10", or the amount's cell
	amount     span // the digits, or the "-", "none" or empty place of no amount
	line       int  // 0-based
	head, col  int  // coinColumn: the header's line and the coin's column
}

// coinAt is a coin found in a line. Offsets are into the line.
type coinAt struct {
	kind       coinKind
	start, end int
	amount     span
	col        int
	denom      string
	n          int
}

// curState is what reading a Currency section carries from line to line.
type curState struct {
	seen   map[string]int // the 1-based line of each denomination read
	inCol  bool           // the line before was part of a table of coin columns
	colRow int            // that table's row of amounts, 1-based
}

// currencyLine reads line i of a Currency section.
func (p *parsed) currencyLine(i int, cs *curState) error {
	line := p.text(i)
	if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "|") {
		cs.inCol = false
		if strings.TrimSpace(line) == "" {
			return nil
		}
		return p.lineCoins(i, line, cs)
	}
	cells := splitRow(line)
	if isSepRow(line, cells) {
		return nil
	}
	if cs.inCol {
		if i+1 == cs.colRow {
			return nil // read with its header
		}
		return p.errf(i+1, "currency", "a second row of amounts under the coins of line %d: want one", cs.colRow-2)
	}
	if i+1 < len(p.ls) && isSepRow(p.text(i+1), splitRow(p.text(i+1))) { // a header
		if cols := coinColumns(line, cells); len(cols) > 0 {
			return p.coinTable(i, cols, cs)
		}
		if !hasAmount(line) { // "| Coin | Amount |"
			return nil
		}
	}
	if len(cells) >= 2 {
		if d := denomLabel(line[cells[0].start:cells[0].end]); d != "" {
			c := cells[1]
			am, n, ok := cellAmount(line[c.start:c.end])
			if !ok {
				return p.errf(i+1, "currency", "%s: %q is not a number", d, line[c.start:c.end])
			}
			coin := coinAt{kind: coinRow, start: cells[0].start, end: c.end, amount: span{c.start + am.start, c.start + am.end}, denom: d, n: n}
			return p.addCoins(i, 0, []coinAt{coin}, cs)
		}
	}
	return p.lineCoins(i, line, cs)
}

// lineCoins reads the coins written in line i in words: "15 gp, 3 sp",
// "**Gold**: 10", "GP: 10, SP: 4".
func (p *parsed) lineCoins(i int, line string, cs *curState) error {
	labels, bad := labelCoins(line)
	if bad != "" {
		return p.errf(i+1, "currency", "%s", bad)
	}
	coins := labels
next:
	for _, c := range findCoins(line) {
		for _, l := range labels {
			if l.amount != c.amount && c.start < l.end && l.start < c.end {
				continue next // "GP: 10 SP: 4": "10 SP" is no coin, SP labels 4
			}
		}
		for k, l := range labels {
			if l.amount == c.amount { // "Gold: 10 gp"
				if l.denom != c.denom {
					return p.errf(i+1, "currency", "%q: %s or %s?", strings.TrimSpace(line[l.start:c.end]), l.denom, c.denom)
				}
				coins[k].end = max(coins[k].end, c.end)
				continue next
			}
		}
		coins = append(coins, c)
	}
	for _, c := range coins {
		// "10 gpp": a coin misspelt, not a setting's own money.
		if coinDenom(c.denom) != "" {
			continue
		}
		if near := misspeltCoin(c.denom); near != "" {
			return p.errf(i+1, "currency", "%q is no coin parley reads: did you mean %s?", strings.TrimSpace(line[c.start:c.end]), near)
		}
	}
	if len(coins) == 0 {
		if hasAmount(line) {
			return p.errf(i+1, "currency", "%q is not an amount of coins: want \"15 gp, 3 sp\" or \"**Gold**: 15\"", strings.TrimSpace(line))
		}
		return nil // prose: "None yet."
	}
	sort.Slice(coins, func(a, b int) bool { return coins[a].start < coins[b].start })
	return p.addCoins(i, 0, coins, cs)
}

// coinTable reads a table whose header, line i, names a coin in each
// column cols holds, and its row of amounts.
func (p *parsed) coinTable(i int, cols []coinAt, cs *curState) error {
	j := i + 2
	if j >= len(p.ls) || !strings.HasPrefix(strings.TrimLeft(p.text(j), " \t"), "|") {
		return p.errf(i+1, "currency", "no row of amounts under the coins")
	}
	row := p.text(j)
	cells := splitRow(row)
	for k, c := range cols {
		if c.col >= len(cells) {
			return p.errf(j+1, "currency", "the row of amounts has no %s cell", c.denom)
		}
		cell := cells[c.col]
		am, n, ok := cellAmount(row[cell.start:cell.end])
		if !ok {
			return p.errf(j+1, "currency", "%s: %q is not a number", c.denom, row[cell.start:cell.end])
		}
		cols[k] = coinAt{kind: coinColumn, start: cell.start, end: cell.end, amount: span{cell.start + am.start, cell.start + am.end}, col: c.col, denom: c.denom, n: n}
	}
	cs.inCol, cs.colRow = true, j+1
	return p.addCoins(j, i, cols, cs)
}

// addCoins records the coins of line i; head is the header's line of
// coin columns.
func (p *parsed) addCoins(i, head int, coins []coinAt, cs *curState) error {
	at := p.ls[i]
	for _, c := range coins {
		if c.n > MaxAmount {
			return p.errf(i+1, "currency", "%d %s is %w: at most %d", c.n, c.denom, ErrRange, MaxAmount)
		}
		if l, ok := cs.seen[c.denom]; ok {
			return p.errf(i+1, "currency", "%s written twice, on lines %d and %d", c.denom, l, i+1)
		}
		cs.seen[c.denom] = i + 1
		p.sh.Currency = append(p.sh.Currency, Coin{Denom: c.denom, Amount: c.n})
		p.t.coins = append(p.t.coins, tCoin{kind: c.kind, start: at + c.start, end: at + c.end,
			amount: span{at + c.amount.start, at + c.amount.end}, line: i, head: head, col: c.col})
	}
	return nil
}

// coinColumns returns the columns of a header row that name coins, each
// as a coinAt with its col and denom, when every cell that is not empty
// names one.
func coinColumns(line string, cells []span) []coinAt {
	var cols []coinAt
	for k, c := range cells {
		text := line[c.start:c.end]
		if normLabel(text) == "" {
			continue
		}
		d := denomLabel(text)
		if d == "" {
			return nil
		}
		cols = append(cols, coinAt{col: k, denom: d})
	}
	return cols
}

// denomLabel returns the denomination a label names ("Gold", "**GP**",
// "gold pieces", "Gold (gp)"), or "".
func denomLabel(s string) string {
	d := ""
	for k := 0; k < len(s); {
		c := s[k]
		switch {
		case isLetter(c):
			w, e := wordAt(s, k)
			switch cd := coinDenom(w); {
			case cd != "" && (d == "" || d == cd):
				d = cd
			case cd == "" && (w == "pieces" || w == "piece" || w == "coins" || w == "coin"):
			default:
				return ""
			}
			k = e
		case isSpace(c) || strings.IndexByte("*_`()", c) >= 0:
			k++
		case c == ':' || c == '.':
			k++
		default:
			return ""
		}
	}
	return d
}

// labelCoins finds coins written label first in a line: "Gold: 10",
// "**GP**: 10", "**Silver:** 3", "gold pieces: 10". It returns what is
// wrong when a label has no amount it can read.
func labelCoins(line string) ([]coinAt, string) {
	var out []coinAt
	for k := 0; k < len(line); k++ {
		if !isLetter(line[k]) || k > 0 && (isLetter(line[k-1]) || isDigit(line[k-1])) {
			continue
		}
		w, e := wordAt(line, k)
		d := coinDenom(w)
		if d == "" {
			k = e - 1
			continue
		}
		c := skipSpaces(line, skipEmph(line, labelEnd(line, e, d)))
		if c >= len(line) || line[c] != ':' {
			k = e - 1
			continue
		}
		v := skipEmph(line, skipSpaces(line, skipEmph(line, c+1)))
		am, n, ae, ok := amountAt(line, v)
		if !ok {
			e := v
			for e < len(line) && strings.IndexByte(",;|", line[e]) < 0 {
				e++
			}
			return nil, fmt.Sprintf("%s: %q is not a number", d, strings.TrimSpace(line[v:e]))
		}
		start := k
		for start > 0 && (line[start-1] == '*' || line[start-1] == '_') {
			start--
		}
		end := skipEmph(line, ae)
		out = append(out, coinAt{kind: labelFirst, start: start, end: end, amount: am, denom: d, n: n})
		k = end - 1
	}
	return out, ""
}

// labelEnd returns where a label that starts with a coin word ending at
// e ends: after "pieces" or "coins", and after "(gp)".
func labelEnd(line string, e int, d string) int {
	q := skipSpaces(line, e)
	if w, f := wordAt(line, q); w == "pieces" || w == "piece" || w == "coins" || w == "coin" {
		e = f
	}
	if q := skipSpaces(line, e); q < len(line) && line[q] == '(' {
		if w, f := wordAt(line, q+1); coinDenom(w) == d && f < len(line) && line[f] == ')' {
			e = f + 1
		}
	}
	return e
}

func skipEmph(s string, j int) int {
	for j < len(s) && (s[j] == '*' || s[j] == '_') {
		j++
	}
	return j
}

// amountAt reads an amount at s[j:]: digits, with commas as in "1,500";
// or no amount, 0: "-", "—", "none", or nothing before the end or a
// ",", ";" or "|". It returns the amount's span and where it ends.
func amountAt(s string, j int) (am span, n, end int, ok bool) {
	k, digits := j, 0
	for k < len(s) && (isDigit(s[k]) || s[k] == ',' && k > j && k+1 < len(s) && isDigit(s[k+1])) {
		if s[k] != ',' {
			digits++
			if digits <= 10 {
				n = n*10 + int(s[k]-'0')
			}
		}
		k++
	}
	if digits > 0 {
		if digits > 10 {
			n = MaxAmount + 1
		}
		if k < len(s) && (isLetter(s[k]) || s[k] == '.' && k+1 < len(s) && isDigit(s[k+1])) {
			return span{}, 0, 0, false
		}
		return span{j, k}, n, k, true
	}
	boundary := func(e int) bool {
		return e == len(s) || isSpace(s[e]) || strings.IndexByte(",;|)*_.", s[e]) >= 0
	}
	for _, dash := range [...]string{"—", "–", "-"} {
		if strings.HasPrefix(s[j:], dash) && boundary(j+len(dash)) {
			return span{j, j + len(dash)}, 0, j + len(dash), true
		}
	}
	if w, e := wordAt(s, j); (w == "none" || w == "nil" || w == "nothing") && boundary(e) {
		return span{j, e}, 0, e, true
	}
	if j == len(s) || strings.IndexByte(",;|", s[j]) >= 0 {
		return span{j, j}, 0, j, true
	}
	return span{}, 0, 0, false
}

// cellAmount reads a table cell that holds an amount, with emphasis and
// perhaps a note after a space.
func cellAmount(cell string) (span, int, bool) {
	a, b := stripEmphasis(cell)
	am, n, e, ok := amountAt(cell[:b], a)
	if !ok || e < b && !isSpace(cell[e]) && cell[e] != '(' {
		return span{}, 0, false
	}
	return am, n, true
}

// hasAmount reports whether a line holds a number that could be an
// amount: not an ordinal ("3rd") or dice ("1d8").
func hasAmount(line string) bool {
	for k := 0; k < len(line); k++ {
		if !isDigit(line[k]) || k > 0 && (isDigit(line[k-1]) || isLetter(line[k-1])) {
			continue
		}
		e := digitsEnd(line, k)
		switch {
		case e+2 <= len(line) && isOrdinal(line[e:e+2]) && (e+2 == len(line) || !isLetter(line[e+2])):
		case e+1 < len(line) && (line[e] == 'd' || line[e] == 'D') && isDigit(line[e+1]):
		default:
			return true
		}
		k = e
	}
	return false
}

// findCoins finds coins written amount first in a line: "15 gp",
// "3 silver", "1,200 gold pieces".
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
			// A setting's own money: "250 credits", "3 trade tokens".
			if name, ne := namedCurrency(line, w); name != "" {
				out = append(out, coinAt{kind: amountFirst, start: k, end: ne, amount: span{k, j}, denom: name, n: n})
				k = ne - 1
				continue
			}
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
		out = append(out, coinAt{kind: amountFirst, start: k, end: end, amount: span{k, j}, denom: d, n: n})
		k = end - 1
	}
	return out
}

// notCurrency are words that start a phrase, not a currency's name:
// "40 in gems", "3 of them".
var notCurrency = map[string]bool{"in": true, "of": true, "worth": true, "a": true, "an": true, "the": true, "and": true, "or": true,
	"for": true, "to": true, "at": true, "from": true, "with": true, "per": true, "x": true, "more": true, "less": true, "times": true}

// namedCurrency reads the name of a setting's own currency written after
// an amount, from w: one or two words of letters ("credits", "trade
// tokens", "marks"), ended by the line, a comma, a semicolon or a
// parenthesis. It returns the name in lower case and where it ends; ""
// for anything else (a sentence is not money).
func namedCurrency(line string, w int) (string, int) {
	var words []string
	e := w
	for len(words) < 3 {
		s := e
		for e < len(line) && isLetter(line[e]) {
			e++
		}
		if e == s {
			break
		}
		words = append(words, strings.ToLower(line[s:e]))
		if n := skipSpaces(line, e); n < len(line) && isLetter(line[n]) {
			e = n
			continue
		}
		break
	}
	rest := strings.TrimLeft(line[e:], " \t")
	if len(words) == 0 || len(words) > 2 || rest != "" && !strings.ContainsAny(rest[:1], ",;(") || notCurrency[words[0]] {
		return "", 0
	}
	return strings.Join(words, " "), e
}

// Edits.

// amountEdit writes n where an amount is written, keeping its commas.
func (p *parsed) amountEdit(s span, n int) edit {
	text := fmtAmount(n, string(p.data[s.start:s.end]))
	if s.start == s.end { // nothing was written: keep a space either side
		if s.start > 0 && !isSpace(p.data[s.start-1]) {
			text = " " + text
		}
		if s.start < len(p.data) && p.data[s.start] == '|' {
			text += " "
		}
	}
	return edit{s.start, s.end, text}
}

// fmtAmount writes n with commas when old has them.
func fmtAmount(n int, old string) string {
	if strings.Contains(old, ",") {
		return withCommas(n)
	}
	return itoa(n)
}

// coinEdits sets a coin already written (at >= 0) or adds one in the
// style of the last coin written: after it on its line ("15 gp, 3 sp",
// "GP: 10, SP: 4"), on a line of its own after it ("**Silver**: 3", a
// table row), or as a new column of a table of coin columns.
func (t *tables) coinEdits(p *parsed, denom string, at, n int) []edit {
	if at >= 0 {
		return []edit{p.amountEdit(t.coins[at].amount, n)}
	}
	if len(t.coins) == 0 {
		coin := itoa(n) + " " + denom
		switch {
		case t.cur.found:
			return []edit{p.insertLines(t.cur.contentEnd, coin+p.nl)}
		case t.eq.found:
			return []edit{p.insertLines(t.eq.contentEnd, p.nl+"### Currency"+p.nl+coin+p.nl)}
		}
		return []edit{p.appendSection("## Equipment" + p.nl + p.nl + "### Currency" + p.nl + coin + p.nl)}
	}
	last := len(t.coins) - 1
	c := t.coins[last]
	if c.kind == coinColumn {
		return p.columnEdits(c, denom, n)
	}
	text := p.coinText(c, denom, n)
	alone := last == 0 || t.coins[last-1].line != c.line
	if c.kind == coinRow || c.kind == labelFirst && alone {
		line, at := p.text(c.line), p.ls[c.line]
		suffix := ""
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "|") {
			suffix = blankCells(line[c.end-at:])
		}
		return []edit{p.insertLines(p.next(c.line), line[:c.start-at]+text+suffix+p.nl)}
	}
	sep := ", "
	if !alone && t.coins[last-1].end <= c.start {
		if s := string(p.data[t.coins[last-1].end:c.start]); simpleSep(s) {
			sep = s
		}
	}
	return []edit{{c.end, c.end, sep + text}}
}

// coinText writes the coin c again for denom and n: "3 sp" after "15 gp",
// "**Silver**: 3" after "**Gold**: 10".
func (p *parsed) coinText(c tCoin, denom string, n int) string {
	old := string(p.data[c.amount.start:c.amount.end])
	pre := restyle(string(p.data[c.start:c.amount.start]), denom)
	post := restyle(string(p.data[c.amount.end:c.end]), denom)
	if old == "" && pre != "" && !isSpace(pre[len(pre)-1]) {
		pre += " "
	}
	if old == "" && post == "" && c.end < len(p.data) && p.data[c.end] == '|' {
		post = " "
	}
	return pre + fmtAmount(n, old) + post
}

// columnEdits adds a column for denom to the table of coin columns that
// holds c, the last of them.
func (p *parsed) columnEdits(c tCoin, denom string, n int) []edit {
	cell := func(li int, def string, f func(string) string) string {
		line := p.text(li)
		if cells := splitRow(line); c.col < len(cells) && cells[c.col].ok() {
			return f(line[cells[c.col].start:cells[c.col].end])
		}
		return def
	}
	head := cell(c.head, denom, func(s string) string { return restyle(s, denom) })
	sep := cell(c.head+1, "---", func(s string) string { return s })
	amount := fmtAmount(n, string(p.data[c.amount.start:c.amount.end]))
	return []edit{p.appendCell(c.head, head), p.appendCell(c.head+1, sep), p.appendCell(c.line, amount)}
}

// appendCell returns an edit adding a cell at the end of the table row
// on line li.
func (p *parsed) appendCell(li int, text string) edit {
	line := p.text(li)
	e := len(strings.TrimRight(line, " \t"))
	at := p.ls[li] + e
	switch {
	case e > 1 && line[e-1] == '|' && isSpace(line[e-2]):
		return edit{at, at, " " + text + " |"}
	case e > 1 && line[e-1] == '|' && line[e-2] != '\\':
		return edit{at, at, text + "|"}
	}
	return edit{at, at, " | " + text}
}

// restyle writes each coin word of s ("gp", "Gold", "GOLD") as the word
// for denom in the same form and case ("sp", "Silver", "SILVER").
func restyle(s, denom string) string {
	var b strings.Builder
	for k := 0; k < len(s); {
		if !isLetter(s[k]) {
			b.WriteByte(s[k])
			k++
			continue
		}
		e := k
		for e < len(s) && isLetter(s[e]) {
			e++
		}
		w := s[k:e]
		if coinDenom(strings.ToLower(w)) != "" && (k == 0 || !isDigit(s[k-1])) {
			w = coinWord(denom, w)
		}
		b.WriteString(w)
		k = e
	}
	return b.String()
}

// coinWord writes denom like the coin word like: abbreviated when like
// is, and in its case.
func coinWord(denom, like string) string {
	w := denom
	if len(like) != 2 {
		w = map[string]string{"gp": "gold", "sp": "silver", "cp": "copper", "ep": "electrum", "pp": "platinum"}[denom]
	}
	switch {
	case strings.ToUpper(like) == like:
		return strings.ToUpper(w)
	case like[0] >= 'A' && like[0] <= 'Z':
		return strings.ToUpper(w[:1]) + w[1:]
	}
	return w
}

// simpleSep reports whether s only separates two coins: ", ", " / ",
// " and ".
func simpleSep(s string) bool {
	t := strings.TrimSpace(s)
	return len(s) <= 6 && (t == "and" || strings.Trim(t, ",;/|&+") == "")
}

// blankCells keeps the cell borders of the rest of a table row and
// blanks what is in the cells.
func blankCells(s string) string {
	b := []byte(s)
	for k, c := range b {
		if c != '|' && !isSpace(c) {
			b[k] = ' '
		}
	}
	return string(b)
}
