package sheet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/markdown"
	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/internal/yamlerr"
	"github.com/parley-dev/parley/mailbox"
)

// front holds where a frontmatter-layout sheet writes each value, as
// yaml.v3 nodes whose Line and Column point into the YAML text.
type front struct {
	start, end int // the YAML text, between the --- lines
	line0      int // the index of the YAML's first line in the file
	bodyLine   int // the index of the first line after the closing ---

	hp, max, levelKey, level *yaml.Node
	temp                     *yaml.Node // temp_hp's value; nil when not written
	abil                     [6]*yaml.Node
	invKey, inv              *yaml.Node // nil when there is no inventory key
	items                    []fItem    // parallel to Sheet.Items
	curKey, cur              *yaml.Node // nil when there is no currency key
	coins                    []*yaml.Node
}

// fItem is an inventory entry: a mapping, or a string read like a
// tables-layout item.
type fItem struct {
	node *yaml.Node
	seq  *yaml.Node // the list it is an entry of: the inventory, or a container's contents
	qty  *yaml.Node // the quantity's value; nil when not written (1)
	tx   itemText   // a string item's reading
	in   *yaml.Node // its in: key's value; nil when not written
}

// splitFrontmatter finds YAML frontmatter as messages have it (see
// mailbox.SplitFrontmatter): a first line "---" and a later line "---" or
// "...". Without the closing line there is none, and the sheet is read in
// the tables layout (p.unclosed notes it, for the error when that finds
// no hit points).
func (p *parsed) splitFrontmatter() *front {
	fm, err := mailbox.SplitFrontmatter(p.data)
	if err != nil {
		p.unclosed = errors.Is(err, mailbox.ErrUnclosedFrontmatter)
		return nil
	}
	return &front{start: fm.HeaderStart, end: fm.HeaderEnd, line0: 1, bodyLine: fm.BodyLine - 1}
}

// yamlError is a frontmatter that is not YAML.
type yamlError struct{ err error }

func (e *yamlError) Error() string { return e.err.Error() }

// decodeYAML decodes a frontmatter; a panic of the decoder is an error.
func decodeYAML(b []byte) (doc yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	err = yaml.Unmarshal(b, &doc)
	return doc, err
}

// parseFront reads the frontmatter. It reports false when the frontmatter
// has no hp key (the sheet is then read in the tables layout), and a
// *yamlError inside an *Error when it is not YAML.
func (p *parsed) parseFront(f *front) (bool, error) {
	doc, err := decodeYAML(p.data[f.start:f.end])
	if err != nil {
		line, msg := yamlerr.Line(p.data[f.start:f.end], err)
		if line > 0 {
			// A person edits the sheet: the likely slip is said (a
			// value holding ": " left unquoted).
			msg = yamlerr.Hint(p.data[f.start:f.end], line, msg)
			line += f.line0
		}
		return false, &Error{Path: p.path, Line: line, Field: "frontmatter", Err: &yamlError{errors.New(msg)}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false, nil
	}
	root := doc.Content[0]
	type pair struct{ k, v *yaml.Node }
	keys := map[string]pair{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if old, ok := keys[k.Value]; ok && k.Kind == yaml.ScalarNode {
			return false, p.errf(f.line(k), k.Value, "written twice, on lines %d and %d", f.line(old.k), f.line(k))
		}
		keys[k.Value] = pair{k, v}
	}
	hp, ok := keys["hp"]
	if !ok {
		if mx, ok := keys["max_hp"]; ok {
			// A sheet of this layout without its hp: say so, should the
			// tables layout find none either.
			p.frontNoHP = p.errf(f.line(mx.k), "hit points", "%w: max_hp on line %d has no hp beside it", ErrNoHP, f.line(mx.k))
			for i := 0; i+1 < len(root.Content); i += 2 {
				k := root.Content[i]
				if near := spell.Nearest(k.Value, []string{"hp"}, 1); near != "" && (len(k.Value) > 2 || strings.EqualFold(k.Value, near)) {
					p.frontNoHP = p.errf(f.line(k), "hit points", "%w: %q is no key parley reads: did you mean hp?", ErrNoHP, k.Value)
					break
				}
			}
		}
		return false, nil
	}
	p.f = f
	// A key one or two edits from one the package reads, written in its
	// place: "levle", "max_hpp". (hp itself is found above.)
	// One written beside the key it misspells ("levle" and "level") is
	// noted in Sheet.Unread; the key wins.
	misspelt := map[string]error{}
	var beside []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if _, known := frontFields[k.Value]; known {
			continue
		}
		edits := 2
		if len(k.Value) <= 4 {
			edits = 1
		}
		near := spell.Nearest(k.Value, frontKeys, edits)
		if near == "" || misspelt[near] != nil {
			continue
		}
		if right, written := keys[near]; written {
			if len(k.Value) > 2 { // "xp", "hd": keys of their own, not "hp" misspelt
				beside = append(beside, p.errf(f.line(k), frontFields[near], "%q is no key parley reads: %s on line %d is the one read", k.Value, near, f.line(right.k)))
			}
			continue
		}
		misspelt[near] = p.errf(f.line(k), frontFields[near], "%q is no key parley reads: did you mean %s?", k.Value, near)
	}
	f.hp = hp.v
	if p.sh.HP, err = p.intNode(hp.v, "hit points", 0, MaxAmount); err != nil {
		return false, err
	}
	p.hpLine = f.line(hp.v)
	mx, ok := keys["max_hp"]
	if !ok {
		if err := misspelt["max_hp"]; err != nil {
			var se *Error
			errors.As(err, &se)
			return false, p.errf(se.Line, "max hit points", "no max_hp beside hp: %w", se.Err)
		}
		return false, p.errf(p.hpLine, "max hit points", "no max_hp beside hp")
	}
	for _, key := range frontKeys {
		if err := misspelt[key]; err != nil && key != "max_hp" {
			p.noteMeant(frontFields[key], err)
		}
	}
	for _, err := range beside {
		p.noteUnread(err)
	}
	f.max = mx.v
	if p.sh.MaxHP, err = p.intNode(mx.v, "max hit points", 1, MaxAmount); err != nil {
		return false, err
	}
	p.checkHPRange()
	if t, ok := keys["temp_hp"]; ok && !isNull(t.v) {
		f.temp = t.v
		if p.sh.TempHP, err = p.intNode(t.v, "temp hit points", 0, MaxAmount); err != nil {
			return false, err
		}
	}
	if lv, ok := keys["level"]; ok {
		f.levelKey, f.level = lv.k, lv.v
		p.levelLine = f.line(lv.v)
		if !isNull(lv.v) {
			// A level outside 1 to 20 is read as written, and noted
			// by checkRanges.
			if p.sh.Level, err = p.intNode(lv.v, "level", -MaxAmount, MaxAmount); err != nil {
				return false, err
			}
			p.levelSet = true
		}
	}
	if ab, ok := keys["abilities"]; ok && !isNull(ab.v) {
		if err := p.frontAbilities(ab.v); err != nil {
			return false, err
		}
	}
	if inv, ok := keys["inventory"]; ok {
		f.invKey, f.inv = inv.k, inv.v
		if err := p.frontItems(inv.v, -1); err != nil {
			return false, err
		}
		if err := p.frontIn(); err != nil {
			return false, err
		}
	}
	if cur, ok := keys["currency"]; ok {
		f.curKey, f.cur = cur.k, cur.v
		if err := p.frontCoins(cur.v); err != nil {
			return false, err
		}
	}
	return true, nil
}

// frontKeys are the keys of a frontmatter sheet the package reads, and
// frontFields the field each is named by in an *Error.
var (
	frontKeys   = []string{"hp", "max_hp", "temp_hp", "level", "abilities", "inventory", "currency"}
	frontFields = map[string]string{"hp": "hit points", "max_hp": "max hit points", "temp_hp": "temp hit points", "level": "level",
		"abilities": "abilities", "inventory": "items", "currency": "currency"}
)

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// line returns the 1-based file line of a node.
func (f *front) line(n *yaml.Node) int { return f.line0 + n.Line }

// intNode reads a number between lo and hi.
func (p *parsed) intNode(n *yaml.Node, field string, lo, hi int) (int, error) {
	line := p.f.line(n)
	if n.Kind != yaml.ScalarNode {
		return 0, p.errf(line, field, "want a number")
	}
	if n.Tag != "!!int" {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && n.Value != "" && strings.Trim(n.Value, "0123456789") == "" {
			return 0, p.errf(line, field, "%q is quoted: write the number without quotes", n.Value)
		}
		var at span
		if s, err := p.f.scalarSpan(p, n); err == nil && !strings.ContainsAny(n.Value, "\r\n") {
			at = s
		}
		return 0, p.notNumber(line, field, n.Value, at)
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || n.Style != 0 {
		return 0, p.errf(line, field, "%q is not a plain number", n.Value)
	}
	if v < lo || v > hi {
		return 0, p.errf(line, field, "%d is %w: want %d to %d", v, ErrRange, lo, hi)
	}
	return v, nil
}

func (p *parsed) frontAbilities(m *yaml.Node) error {
	f := p.f
	if m.Kind != yaml.MappingNode {
		return p.errf(f.line(m), "abilities", "want a mapping such as {str: 15, dex: 13, con: 14, int: 8, wis: 12, cha: 10}")
	}
	p.abilLine = f.line(m)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		a := abilityIndex(normLabel(k.Value))
		if a < 0 {
			continue
		}
		if f.abil[a] != nil {
			return p.errf(f.line(k), AbilityNames[a], "written twice, on lines %d and %d", f.line(f.abil[a]), f.line(k))
		}
		n, err := p.intNode(v, AbilityNames[a], -MaxAmount, MaxAmount) // out of range: noted by checkRanges
		if err != nil {
			return err
		}
		f.abil[a], p.sh.Abilities[a], p.abilLines[a] = v, n, f.line(v)
	}
	var missing []string
	for a, n := range f.abil {
		if n == nil {
			missing = append(missing, strings.ToLower(AbilityNames[a]))
		}
	}
	if len(missing) > 0 {
		return p.errf(f.line(m), "abilities", "no %s", strings.Join(missing, ", "))
	}
	p.haveAbil = true
	return nil
}

// frontItems reads the entries of an inventory list, and those of the
// contents: lists of its entries, as items in container in (-1: none).
func (p *parsed) frontItems(seq *yaml.Node, in int) error {
	f := p.f
	if isNull(seq) {
		return nil
	}
	if seq.Kind != yaml.SequenceNode {
		field := "items"
		if in >= 0 {
			field = "items: contents"
		}
		return p.errf(f.line(seq), field, "want a list of items such as - {name: Longsword, quantity: 1}")
	}
	for _, n := range seq.Content {
		line := f.line(n)
		it := fItem{node: n, seq: seq}
		item := Item{Quantity: 1, Line: line}
		var contents *yaml.Node
		switch {
		case n.Kind == yaml.MappingNode:
			seen := map[string]*yaml.Node{} // the key that wrote each value
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				key := k.Value
				if key == "qty" {
					key = "quantity"
				}
				if old, ok := seen[key]; ok && k.Kind == yaml.ScalarNode {
					if old.Value != k.Value {
						return p.errf(f.line(k), "items", "%s written twice, as %s on line %d and %s on line %d", key, old.Value, f.line(old), k.Value, f.line(k))
					}
					return p.errf(f.line(k), "items", "%s written twice, on lines %d and %d", key, f.line(old), f.line(k))
				}
				seen[key] = k
				switch k.Value {
				case "name":
					if v.Kind != yaml.ScalarNode {
						return p.errf(f.line(v), "items", "want a name")
					}
					item.Name = strings.TrimSpace(v.Value)
				case "quantity", "qty":
					q, err := p.intNode(v, "items", 0, MaxAmount)
					if err != nil {
						return err
					}
					it.qty, item.Quantity = v, q
				case "note":
					if v.Kind != yaml.ScalarNode {
						return p.errf(f.line(v), "items", "want a note as text")
					}
					item.Note = strings.TrimSpace(v.Value)
				case "in":
					if v.Kind != yaml.ScalarNode || isNull(v) || strings.TrimSpace(v.Value) == "" {
						return p.errf(f.line(v), "items: in", "want the name of the item it is in, like in: Explorer's pack")
					}
					it.in = v
				case "contents":
					contents = v
				}
			}
			if item.Name == "" {
				return p.errf(line, "items", "an item has no name")
			}
			if it.in != nil && in >= 0 {
				return p.errf(f.line(it.in), "items: in", "%q is in the contents of %s already", item.Name, p.sh.Items[in].Name)
			}
		case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
			it.tx = parseItemText(n.Value)
			item.Name = n.Value[it.tx.nameStart:it.tx.nameEnd]
			item.Quantity, item.Note = it.tx.qty, it.tx.note
			if item.Quantity > MaxAmount {
				return p.errf(line, "items", "%d is %w: at most %d", item.Quantity, ErrRange, MaxAmount)
			}
		default:
			return p.errf(line, "items", "want an item such as {name: Longsword, quantity: 1}")
		}
		item.Slug = Slug(item.Name)
		if it.node.Kind == yaml.ScalarNode {
			item.Slug = kebab(item.Name)
		}
		idx := len(f.items)
		f.items = append(f.items, it)
		p.sh.Items = append(p.sh.Items, item)
		p.parent = append(p.parent, in)
		if contents != nil {
			depth := 1
			for j := in; j >= 0; j = p.parent[j] {
				depth++
			}
			if depth > MaxDepth {
				return p.errf(f.line(contents), "items: contents", "%s is %d lists deep, %w: at most %d", item.Name, depth, ErrRange, MaxDepth)
			}
			if err := p.frontItems(contents, idx); err != nil {
				return err
			}
		}
	}
	return nil
}

// frontIn finds the container each in: key names: the one item whose
// name or slug it is, singular or plural.
func (p *parsed) frontIn() error {
	f := p.f
	for i, it := range f.items {
		if it.in == nil {
			continue
		}
		k := slugKey(Slug(it.in.Value))
		var found []int
		for j, c := range p.sh.Items {
			if j != i && k != "" && slugKey(c.Slug) == k {
				found = append(found, j)
			}
		}
		switch len(found) {
		case 0:
			return p.errf(f.line(it.in), "items: in", "%w %q to hold %s", ErrUnknownItem, it.in.Value, p.sh.Items[i].Name)
		case 1:
		default:
			return p.errf(f.line(it.in), "items: in", "%w %q: items on lines %d and %d go by that name", ErrAmbiguous, it.in.Value, p.sh.Items[found[0]].Line, p.sh.Items[found[1]].Line)
		}
		p.parent[i] = found[0]
	}
	// No item may hold itself, through others or not, or be too deep.
	for i := range p.parent {
		depth := 0
		for j := p.parent[i]; j >= 0; j = p.parent[j] {
			depth++
			if j == i || depth > len(p.parent) {
				return p.errf(f.line(f.items[i].node), "items: in", "%s is in itself", p.sh.Items[i].Name)
			}
		}
		if depth > MaxDepth {
			return p.errf(f.line(f.items[i].node), "items: in", "%s is %d containers deep, %w: at most %d", p.sh.Items[i].Name, depth, ErrRange, MaxDepth)
		}
	}
	return nil
}

func (p *parsed) frontCoins(m *yaml.Node) error {
	f := p.f
	if isNull(m) {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return p.errf(f.line(m), "currency", "want a mapping such as {gp: 10, sp: 5}")
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		d := coinDenom(strings.ToLower(k.Value))
		if d == "" {
			d = strings.ToLower(strings.TrimSpace(k.Value)) // a setting's own: credits
			if near := misspeltCoin(d); near != "" && p.meant["currency"] == nil {
				// gpp: 10: read as written, and no change to the money
				// writes a gp beside it.
				p.noteMeant("currency", p.errf(f.line(k), "currency", "%q is no coin parley reads: did you mean %s?", k.Value, near))
			}
		}
		if l, ok := seen[d]; ok {
			return p.errf(f.line(k), "currency", "%s written twice, on lines %d and %d", d, l, f.line(k))
		}
		seen[d] = f.line(k)
		n, err := p.intNode(v, "currency", 0, MaxAmount)
		if err != nil {
			return err
		}
		f.coins = append(f.coins, v)
		p.sh.Currency = append(p.sh.Currency, Coin{Denom: d, Amount: n})
	}
	return nil
}

// Positions.

func uneditable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUneditable, fmt.Sprintf(format, args...))
}

// pos returns the offset in the file where a node starts.
func (f *front) pos(p *parsed, n *yaml.Node) (int, error) {
	li := f.line0 + n.Line - 1
	if n.Line < 1 || n.Column < 1 || li >= len(p.ls) {
		return 0, uneditable("no position for the value on line %d", f.line(n))
	}
	off, end := p.ls[li], p.end(li)
	for c := 1; c < n.Column; c++ {
		if off >= end {
			return 0, uneditable("no position for the value on line %d", f.line(n))
		}
		_, w := utf8.DecodeRune(p.data[off:end])
		off += w
	}
	if off < f.start || off > f.end {
		return 0, uneditable("no position for the value on line %d", f.line(n))
	}
	return off, nil
}

// scalarSpan returns where a one-line scalar is written, after checking
// that the text there is its value.
func (f *front) scalarSpan(p *parsed, n *yaml.Node) (span, error) {
	if n.Kind != yaml.ScalarNode {
		return span{}, uneditable("line %d: not a single value", f.line(n))
	}
	off, err := f.pos(p, n)
	if err != nil {
		return span{}, err
	}
	switch n.Style {
	case 0:
		end := off + len(n.Value)
		if n.Value == "" || strings.ContainsAny(n.Value, "\r\n") || end > f.end || string(p.data[off:end]) != n.Value {
			return span{}, uneditable("line %d: the text there is not %q", f.line(n), n.Value)
		}
		return span{off, end}, nil
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		q := p.data[off]
		if q != '"' && q != '\'' {
			return span{}, uneditable("line %d: the text there is not %q", f.line(n), n.Value)
		}
		for k := off + 1; k < f.end; k++ {
			switch {
			case q == '"' && p.data[k] == '\\':
				k++
			case p.data[k] == q && q == '\'' && k+1 < f.end && p.data[k+1] == '\'':
				k++
			case p.data[k] == q:
				var v string
				if yaml.Unmarshal(p.data[off:k+1], &v) != nil || v != n.Value {
					return span{}, uneditable("line %d: the text there is not %q", f.line(n), n.Value)
				}
				return span{off, k + 1}, nil
			}
		}
	}
	return span{}, uneditable("line %d: %q is not written on one line", f.line(n), n.Value)
}

// flowEnd returns the offset of the bracket closing the flow collection
// that opens at off.
func (f *front) flowEnd(p *parsed, off int) (int, error) {
	d := p.data
	if off >= f.end || d[off] != '{' && d[off] != '[' {
		return 0, uneditable("no flow collection at line %d", p.lineOf(off)+1)
	}
	depth := 0
	prev := byte('{')
	for k := off; k < f.end; k++ {
		c := d[k]
		switch {
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return k, nil
			}
		case (c == '"' || c == '\'') && strings.IndexByte("{[,:", prev) >= 0:
			for k++; k < f.end; k++ {
				if c == '"' && d[k] == '\\' {
					k++
				} else if d[k] == c {
					if c == '\'' && k+1 < f.end && d[k+1] == '\'' {
						k++
						continue
					}
					break
				}
			}
		case c == '#' && (k == 0 || d[k-1] == ' ' || d[k-1] == '\t' || d[k-1] == '\n'):
			for k < f.end && d[k] != '\n' {
				k++
			}
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
	return 0, uneditable("no end to the flow collection at line %d", p.lineOf(off)+1)
}

// nodeSpan returns where a flow collection or a one-line scalar is
// written.
func (f *front) nodeSpan(p *parsed, n *yaml.Node) (span, error) {
	if n.Kind == yaml.ScalarNode {
		return f.scalarSpan(p, n)
	}
	if n.Style&yaml.FlowStyle == 0 {
		return span{}, uneditable("line %d: not written in flow style", f.line(n))
	}
	off, err := f.pos(p, n)
	if err != nil {
		return span{}, err
	}
	end, err := f.flowEnd(p, off)
	if err != nil {
		return span{}, err
	}
	return span{off, end + 1}, nil
}

// extent returns the lines of a block sequence's entry, from the line of
// its "-" to its last line indented beyond the dash, and the dash's
// column.
func (f *front) extent(p *parsed, n *yaml.Node) (span, int, error) {
	off, err := f.pos(p, n)
	if err != nil {
		return span{}, 0, err
	}
	li := p.lineOf(off)
	k := off - 1
	for k >= p.ls[li] && isSpace(p.data[k]) {
		k--
	}
	if k < p.ls[li] || p.data[k] != '-' || strings.Trim(string(p.data[p.ls[li]:k]), " ") != "" {
		return span{}, 0, uneditable("line %d: the entry does not start its line with \"- \"", f.line(n))
	}
	col := k - p.ls[li]
	closing := p.lineOf(f.end)
	if f.end == len(p.data) {
		closing = len(p.ls)
	}
	last := li
	for j := li + 1; j < closing; j++ {
		t := p.text(j)
		if strings.TrimSpace(t) == "" {
			continue
		}
		if markdown.Indent(t) <= col {
			break
		}
		last = j
	}
	return span{p.ls[li], p.next(last)}, col, nil
}

// keyEnd returns the offset after a plain key's text, checking that a
// colon follows.
func (f *front) keyEnd(p *parsed, k *yaml.Node) (int, error) {
	s, err := f.scalarSpan(p, k)
	if err != nil {
		return 0, err
	}
	j := s.end
	for j < f.end && isSpace(p.data[j]) {
		j++
	}
	if j >= f.end || p.data[j] != ':' {
		return 0, uneditable("line %d: no colon after %q", f.line(k), k.Value)
	}
	return s.end, nil
}

// setValue writes text as the value of key k, whose value v may be null
// (empty or written ~ or null).
func (f *front) setValue(p *parsed, k, v *yaml.Node, text string) ([]edit, error) {
	if v.Kind == yaml.ScalarNode && v.Value == "" && isNull(v) {
		e, err := f.keyEnd(p, k)
		if err != nil {
			return nil, err
		}
		colon := bytes.IndexByte(p.data[e:f.end], ':') + e
		return []edit{{colon + 1, colon + 1, " " + text}}, nil
	}
	s, err := f.scalarSpan(p, v)
	if err != nil {
		return nil, err
	}
	return []edit{{s.start, s.end, text}}, nil
}

// appendKey returns an edit adding lines at the end of the frontmatter.
func (f *front) appendKey(p *parsed, text string) edit {
	return edit{f.end, f.end, text}
}

// Edits.

func (f *front) hpEdits(p *parsed, hp, maxHP, temp int) ([]edit, error) {
	var edits []edit
	if temp != p.sh.TempHP {
		if f.temp == nil {
			edits = append(edits, f.appendKey(p, "temp_hp: "+itoa(temp)+p.nl))
		} else {
			s, err := f.scalarSpan(p, f.temp)
			if err != nil {
				return nil, err
			}
			edits = append(edits, edit{s.start, s.end, itoa(temp)})
		}
	}
	for _, c := range []struct {
		n        *yaml.Node
		old, new int
	}{{f.hp, p.sh.HP, hp}, {f.max, p.sh.MaxHP, maxHP}} {
		if c.old == c.new {
			continue
		}
		s, err := f.scalarSpan(p, c.n)
		if err != nil {
			return nil, err
		}
		edits = append(edits, edit{s.start, s.end, itoa(c.new)})
	}
	return edits, nil
}

func (f *front) levelEdits(p *parsed, n int) ([]edit, error) {
	if f.level == nil {
		return []edit{f.appendKey(p, "level: "+itoa(n)+p.nl)}, nil
	}
	return f.setValue(p, f.levelKey, f.level, itoa(n))
}

func (f *front) abilityEdits(p *parsed, i, n int) ([]edit, error) {
	s, err := f.scalarSpan(p, f.abil[i])
	if err != nil {
		return nil, err
	}
	return []edit{{s.start, s.end, itoa(n)}}, nil
}

func (f *front) qtyEdits(p *parsed, i, q int) ([]edit, error) {
	it := f.items[i]
	switch {
	case it.qty != nil:
		s, err := f.scalarSpan(p, it.qty)
		if err != nil {
			return nil, err
		}
		return []edit{{s.start, s.end, itoa(q)}}, nil
	case it.node.Kind == yaml.ScalarNode:
		s, err := f.scalarSpan(p, it.node)
		if err != nil {
			return nil, err
		}
		if it.node.Style != 0 {
			return nil, uneditable("line %d: a quoted item", f.line(it.node))
		}
		edits := it.tx.qtyEdits(it.node.Value, q)
		for k := range edits {
			edits[k].start += s.start
			edits[k].end += s.start
		}
		return edits, nil
	case it.node.Style&yaml.FlowStyle != 0:
		s, err := f.nodeSpan(p, it.node)
		if err != nil {
			return nil, err
		}
		e := s.end - 1
		for e > s.start+1 && isSpace(p.data[e-1]) {
			e--
		}
		return []edit{{e, e, ", quantity: " + itoa(q)}}, nil
	}
	ext, _, err := f.extent(p, it.node)
	if err != nil {
		return nil, err
	}
	off, err := f.pos(p, it.node)
	if err != nil {
		return nil, err
	}
	col := off - p.ls[p.lineOf(off)]
	return []edit{{ext.end, ext.end, strings.Repeat(" ", col) + "quantity: " + itoa(q) + p.nl}}, nil
}

func (f *front) removeEdits(p *parsed, i int) ([]edit, error) {
	seq := f.items[i].seq
	if seq.Style&yaml.FlowStyle == 0 {
		ext, _, err := f.extent(p, f.items[i].node)
		if err != nil {
			return nil, err
		}
		return []edit{{ext.start, ext.end, ""}}, nil
	}
	spans := make([]span, len(seq.Content))
	at := -1
	for k, n := range seq.Content {
		s, err := f.nodeSpan(p, n)
		if err != nil {
			return nil, err
		}
		spans[k] = s
		if n == f.items[i].node {
			at = k
		}
	}
	switch {
	case at < 0:
		return nil, uneditable("line %d: the entry is not in its list", f.line(f.items[i].node))
	case len(spans) == 1:
		return []edit{{spans[0].start, spans[0].end, ""}}, nil
	case at < len(spans)-1:
		return []edit{{spans[at].start, spans[at+1].start, ""}}, nil
	}
	return []edit{{spans[at-1].end, spans[at].end, ""}}, nil
}

// yamlText writes s as a YAML scalar: plain when that reads back as the
// same string, double-quoted otherwise.
func yamlText(s string, flow bool) string {
	plain := s != "" && s == strings.TrimSpace(s) && isLetter(s[0]) || s != "" && isDigit(s[0])
	for _, r := range s {
		if r < ' ' || strings.ContainsRune("#:\"{}[],&*!|>%@`", r) && (flow || !strings.ContainsRune(",[]{}", r)) {
			plain = false
		}
	}
	if plain {
		var v any
		if yaml.Unmarshal([]byte(s), &v) != nil || v != s {
			plain = false
		}
	}
	if plain {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func flowItem(name string, q int, note, in string) string {
	s := "{name: " + yamlText(name, true) + ", quantity: " + itoa(q)
	if note != "" {
		s += ", note: " + yamlText(note, true)
	}
	if in != "" {
		s += ", in: " + yamlText(in, true)
	}
	return s + "}"
}

// addEdits adds an entry at the end of the inventory list; an item in
// another (in >= 0) says so with an in: key.
func (f *front) addEdits(p *parsed, in int, name string, q int, note string) ([]edit, Item, error) {
	want := Item{Name: name, Slug: Slug(name), Quantity: q, Note: note}
	container := ""
	if in >= 0 {
		container = p.sh.Items[in].Name
	}
	entry := flowItem(name, q, note, container)
	var top []fItem // the entries of the inventory list itself
	for _, it := range f.items {
		if it.seq == f.inv {
			top = append(top, it)
		}
	}
	switch {
	case f.inv == nil:
		return []edit{f.appendKey(p, "inventory:"+p.nl+"  - "+entry+p.nl)}, want, nil
	case isNull(f.inv):
		off, err := f.pos(p, f.invKey)
		if err != nil {
			return nil, want, err
		}
		li := p.lineOf(off)
		lines := strings.Repeat(" ", off-p.ls[li]+2) + "- " + entry
		if f.inv.Value == "" {
			return []edit{p.insertLines(p.next(li), lines+p.nl)}, want, nil
		}
		e, err := f.keyEnd(p, f.invKey)
		if err != nil {
			return nil, want, err
		}
		s, err := f.scalarSpan(p, f.inv)
		if err != nil {
			return nil, want, err
		}
		if strings.TrimSpace(string(p.data[e:s.start])) != ":" {
			return nil, want, uneditable("line %d: the inventory key", f.line(f.invKey))
		}
		return []edit{{e, s.end, ":" + p.nl + lines}}, want, nil
	}
	if len(top) > 0 && top[len(top)-1].node.Kind == yaml.ScalarNode && in < 0 {
		var text string
		text, want = itemLine(name, q, note)
		entry = yamlText(text, f.inv.Style&yaml.FlowStyle != 0)
	}
	if f.inv.Style&yaml.FlowStyle != 0 {
		s, err := f.nodeSpan(p, f.inv)
		if err != nil {
			return nil, want, err
		}
		if len(top) == 0 {
			if strings.TrimSpace(string(p.data[s.start+1:s.end-1])) != "" {
				return nil, want, uneditable("line %d: the inventory list", f.line(f.inv))
			}
			return []edit{{s.start + 1, s.end - 1, entry}}, want, nil
		}
		last, err := f.nodeSpan(p, top[len(top)-1].node)
		if err != nil {
			return nil, want, err
		}
		return []edit{{last.end, last.end, ", " + entry}}, want, nil
	}
	if len(top) == 0 {
		return nil, want, uneditable("line %d: the inventory list", f.line(f.inv))
	}
	last := top[len(top)-1].node
	ext, col, err := f.extent(p, last)
	if err != nil {
		return nil, want, err
	}
	dash := strings.Repeat(" ", col) + "- "
	if last.Kind != yaml.MappingNode || last.Style&yaml.FlowStyle != 0 {
		return []edit{{ext.end, ext.end, dash + entry + p.nl}}, want, nil
	}
	off, err := f.pos(p, last)
	if err != nil {
		return nil, want, err
	}
	kc := off - p.ls[p.lineOf(off)]
	if kc <= col {
		return nil, want, uneditable("line %d: the entry's keys", f.line(last))
	}
	ind := strings.Repeat(" ", kc)
	lines := strings.Repeat(" ", col) + "-" + strings.Repeat(" ", kc-col-1) + "name: " + yamlText(name, false) + p.nl +
		ind + "quantity: " + itoa(q) + p.nl
	if note != "" {
		lines += ind + "note: " + yamlText(note, false) + p.nl
	}
	if container != "" {
		lines += ind + "in: " + yamlText(container, false) + p.nl
	}
	return []edit{{ext.end, ext.end, lines}}, want, nil
}

func (f *front) coinEdits(p *parsed, denom string, at, n int) ([]edit, error) {
	if at >= 0 {
		s, err := f.scalarSpan(p, f.coins[at])
		if err != nil {
			return nil, err
		}
		return []edit{{s.start, s.end, itoa(n)}}, nil
	}
	pair := denom + ": " + itoa(n)
	switch {
	case f.cur == nil:
		return []edit{f.appendKey(p, "currency: {"+pair+"}"+p.nl)}, nil
	case isNull(f.cur):
		return f.setValue(p, f.curKey, f.cur, "{"+pair+"}")
	case f.cur.Style&yaml.FlowStyle != 0:
		s, err := f.nodeSpan(p, f.cur)
		if err != nil {
			return nil, err
		}
		if len(f.cur.Content) == 0 {
			return []edit{{s.start + 1, s.end - 1, pair}}, nil
		}
		e := s.end - 1
		for e > s.start+1 && isSpace(p.data[e-1]) {
			e--
		}
		return []edit{{e, e, ", " + pair}}, nil
	}
	first, last := f.cur.Content[0], f.cur.Content[len(f.cur.Content)-1]
	if _, err := f.scalarSpan(p, last); err != nil {
		return nil, err
	}
	off, err := f.pos(p, first)
	if err != nil {
		return nil, err
	}
	lo, err := f.pos(p, last)
	if err != nil {
		return nil, err
	}
	col := off - p.ls[p.lineOf(off)]
	return []edit{p.insertLines(p.next(p.lineOf(lo)), strings.Repeat(" ", col)+pair+p.nl)}, nil
}
