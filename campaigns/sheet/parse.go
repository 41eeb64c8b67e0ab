package sheet

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// parsed is one reading of a sheet's text: the values and where each is
// written.
type parsed struct {
	path   string
	data   []byte
	ls     []int  // the offset where each line starts
	nl     string // the file's line ending, "\n" or "\r\n"
	sh     Sheet
	keys   []string // slugKey of each item, parallel to sh.Items
	parent []int    // the index of the item each item is in, -1 for none; parallel to sh.Items
	t      *tables  // the tables layout's positions, or nil
	f      *front   // the frontmatter layout's positions, or nil

	hpLine, levelLine, abilLine int    // 1-based, 0 when not written
	levelSet                    bool   // a level is written and read (0 included)
	abilLines                   [6]int // 1-based line of each ability score, when haveAbil
	// invalid is what Sheet.Invalid says, noted as it is found (hit
	// points above the maximum) and by checkRanges.
	invalid []*Error
	// lenient is set by Inspect: a number not read (a level of "one")
	// is noted in bad, its field left unset, instead of failing.
	lenient   bool
	bad       []*Error
	haveAbil  bool
	curErr    error // why the money could not be read
	unclosed  bool  // the first line is "---" and no line closes it
	frontNoHP error // a frontmatter with max_hp and no hp: what to say when the tables have none either
	// meant holds, by field ("level", "temp hit points"), a value the
	// sheet writes where the package cannot read it: a label or key
	// misspelt, a table row without its value cell. Each is noted in
	// Sheet.Unread, and a change to that field refuses with it rather
	// than write a second value beside it.
	meant map[string]error
	// unread is the *Error of each of Sheet.Unread, parallel to it.
	unread []*Error
}

// noteMeant notes err as what was meant for field (see parsed.meant):
// the first noted for a field is what a change to it refuses with.
func (p *parsed) noteMeant(field string, err error) {
	if p.meant == nil {
		p.meant = map[string]error{}
	}
	if p.meant[field] == nil {
		p.meant[field] = err
	}
	p.noteUnread(err)
}

// noteUnread notes err, an *Error, in Sheet.Unread.
func (p *parsed) noteUnread(err error) {
	var se *Error
	if !errors.As(err, &se) {
		se = &Error{Path: p.path, Err: err}
	}
	p.sh.Unread = append(p.sh.Unread, err.Error())
	p.unread = append(p.unread, se)
}

// span is a range of bytes of the text; the zero span is no span.
type span struct{ start, end int }

func (s span) ok() bool { return s.end > s.start }

// edit replaces the bytes [start, end) with text.
type edit struct {
	start, end int
	text       string
}

// splice applies non-overlapping edits to data, returning a new slice.
func splice(data []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	n := len(data)
	for _, e := range edits {
		n += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, data[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, data[at:]...)
}

func lineStarts(data []byte) []int {
	ls := make([]int, 1, bytes.Count(data, []byte{'\n'})+1)
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			ls = append(ls, i+1)
		}
	}
	return ls
}

// next returns the offset after line i and its line break.
func (p *parsed) next(i int) int {
	if i+1 < len(p.ls) {
		return p.ls[i+1]
	}
	return len(p.data)
}

// end returns the offset where line i's text ends, before "\r\n" or "\n".
func (p *parsed) end(i int) int {
	e := p.next(i)
	if e > p.ls[i] && p.data[e-1] == '\n' {
		e--
		if e > p.ls[i] && p.data[e-1] == '\r' {
			e--
		}
	}
	return e
}

func (p *parsed) text(i int) string { return string(p.data[p.ls[i]:p.end(i)]) }

// lineOf returns the 0-based line holding offset off.
func (p *parsed) lineOf(off int) int {
	return sort.Search(len(p.ls), func(i int) bool { return p.ls[i] > off }) - 1
}

// insertLines returns an edit inserting text (whole lines, each ending in
// a line break) at pos, the start of a line or the end of the text; a text
// that does not end in a line break gets one first.
func (p *parsed) insertLines(pos int, text string) edit {
	if pos == len(p.data) && pos > 0 && p.data[pos-1] != '\n' {
		text = p.nl + text
	}
	return edit{pos, pos, text}
}

// notNumber returns the *Error of line's field, a value text written
// where a number goes that is not one; at is where a number goes in its
// place (see NotNumber).
func (p *parsed) notNumber(line int, field, text string, at span) error {
	return &Error{Path: p.path, Line: line, Field: field, Err: &NotNumber{Text: text, at: at}}
}

// wordSpan is the span s[a:b] at off, a value to write a number over, when
// it is one word: "eight", "1O". Not ok for words ("seven of twelve"),
// whose meaning a number would not keep, nor for a word with emphasis
// marks in it ("**three**/8": the number written over "three**" left
// "**4/8", a bold never closed; emphasis around the whole value is read
// around it, and stays).
func wordSpan(s string, a, b, off int) span {
	if a >= b || strings.ContainsAny(s[a:b], " \t|/*_") {
		return span{}
	}
	return span{off + a, off + b}
}

func (p *parsed) errf(line int, field, format string, args ...any) error {
	return &Error{Path: p.path, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
}

func parse(path string, data []byte) (*parsed, error) {
	return parseAs(&parsed{path: path, data: data, ls: lineStarts(data), nl: "\n"})
}

// notANumber is err, a number of a field that is not one, unless p is
// lenient: then it is noted in p.bad, and nil.
func (p *parsed) notANumber(err error) error {
	var se *Error
	if !p.lenient || !errors.As(err, &se) {
		return err
	}
	p.bad = append(p.bad, se)
	return nil
}

func parseAs(p *parsed) (*parsed, error) {
	path, data := p.path, p.data
	if len(data) > MaxSize {
		return nil, p.errf(0, "", "the file is %d bytes, %w: at most %d", len(data), ErrRange, MaxSize)
	}
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		p.nl = "\r\n"
	}
	base := filepath.Base(path)
	p.sh = Sheet{Name: strings.TrimSuffix(base, filepath.Ext(base)), Path: path}
	if path == "" {
		p.sh.Name = ""
	}
	body := 0
	if f := p.splitFrontmatter(); f != nil {
		ok, err := p.parseFront(f)
		var ye *yamlError
		switch {
		case errors.As(err, &ye):
			// Not YAML: perhaps a markdown sheet between two rules. Read
			// it as tables; failing that, the YAML error says most.
			q := &parsed{path: path, data: data, ls: p.ls, nl: p.nl, sh: p.sh, lenient: p.lenient}
			q.sh.Layout = Tables
			if q.parseTables(0) == nil && q.checkItems() == nil {
				q.checkRanges()
				return q, nil
			}
			return nil, err
		case err != nil:
			return nil, err
		case ok:
			p.sh.Layout = Frontmatter
			return p.checked()
		}
		p.f = nil
		body = f.bodyLine
	}
	p.sh.Layout = Tables
	if err := p.parseTables(body); err != nil {
		return nil, err
	}
	return p.checked()
}

// checkItems computes the items' keys, containers and depths, and
// refuses two items of one key directly in one container (or both in
// none): the same "10 torches" in two packs is fine.
func (p *parsed) checkItems() error {
	n := len(p.sh.Items)
	if len(p.parent) != n {
		p.parent = make([]int, n)
		for i := range p.parent {
			p.parent[i] = -1
		}
	}
	p.keys = make([]string, n)
	type slot struct {
		in  int
		key string
	}
	seen := make(map[slot]int, n)
	for i, it := range p.sh.Items {
		k := slugKey(it.Slug)
		p.keys[i] = k
		in := p.parent[i]
		if in >= 0 {
			p.sh.Items[i].In = p.sh.Items[in].Name
			depth := 0
			for j := in; j >= 0 && depth <= n; j = p.parent[j] {
				depth++
			}
			p.sh.Items[i].Depth = depth
		}
		if j, ok := seen[slot{in, k}]; ok {
			a := p.sh.Items[j]
			where := ""
			if in >= 0 {
				where = ", both in " + p.sh.Items[in].Name
			}
			return p.errf(it.Line, "items", "%w: %q on line %d and %q on line %d%s", ErrDuplicateItem, a.Name, a.Line, it.Name, it.Line, where)
		}
		seen[slot{in, k}] = i
	}
	return nil
}

// children returns the items directly in item i.
func (p *parsed) children(i int) []int {
	var out []int
	for j, in := range p.parent {
		if in == i {
			out = append(out, j)
		}
	}
	return out
}

// child returns the item directly in container in (-1: in none) whose
// slug matches slug, singular or plural, or -1.
func (p *parsed) child(in int, slug string) int {
	k := slugKey(slug)
	for i, ik := range p.keys {
		if ik == k && p.parent[i] == in {
			return i
		}
	}
	return -1
}

// matches returns the items accept takes whose slug matches q's exactly
// (singular or plural); failing that, those whose name holds the words
// of q in a row.
func (p *parsed) matches(q string, accept func(int) bool) []int {
	slug := Slug(q)
	if slug == "" {
		return nil
	}
	k := slugKey(slug)
	want := strings.Split(k, "-")
	var exact, run []int
	for i, ik := range p.keys {
		switch {
		case !accept(i):
		case ik == k:
			exact = append(exact, i)
		case hasRun(strings.Split(ik, "-"), want):
			run = append(run, i)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return run
}

// named reports whether item i is named q: by its slug, or by a run of
// its words unless exact is set.
func (p *parsed) named(i int, q string, exact bool) bool {
	k := slugKey(Slug(q))
	if k == "" {
		return false
	}
	return p.keys[i] == k || !exact && hasRun(strings.Split(p.keys[i], "-"), strings.Split(k, "-"))
}

// in reports whether the containers of item i are, innermost last, the
// items path names: ["explorers-pack"] for an item in the Explorer's
// pack, ["pack", "pouch"] for one in a pouch in a pack, and a first ""
// for the top: ["", "pack"] is a pack that is in no other item.
func (p *parsed) in(i int, path []string, exact bool) bool {
	j := p.parent[i]
	for c := len(path) - 1; c >= 0; c-- {
		if path[c] == "" {
			return c == 0 && j < 0
		}
		if j < 0 || !p.named(j, path[c], exact) {
			return false
		}
		j = p.parent[j]
	}
	return true
}

// find finds the item a name or slug means: an exact match, else the one
// item whose name holds the words of q in a row. A name may say which
// container the item is in, "explorers-pack/torch" ("pack/pouch/torch";
// "/torch" for the torch in no container); a name that matches items in
// several containers is ambiguous.
func (p *parsed) find(q string) (int, error) {
	all := func(int) bool { return true }
	found := p.matches(q, all)
	if path := strings.Split(q, "/"); len(path) > 1 {
		whole := found
		found = nil
		for _, exact := range []bool{true, false} {
			found = p.matches(path[len(path)-1], func(i int) bool { return p.in(i, path[:len(path)-1], exact) })
			if len(found) > 0 {
				break
			}
		}
		if len(found) == 0 && len(whole) == 1 && strings.Contains(p.sh.Items[whole[0]].Name, "/") {
			found = whole // a name with a slash of its own: "Rope/chain"
		}
	}
	switch len(found) {
	case 0:
		return -1, fmt.Errorf("%w %q", ErrUnknownItem, q)
	case 1:
		return found[0], nil
	}
	return -1, p.ambiguous(q, found)
}

// ambiguous says which items q could be, and, when they are in
// different containers, how to name each.
func (p *parsed) ambiguous(q string, found []int) error {
	var names, quals []string
	apart := false
	for _, i := range found {
		it := p.sh.Items[i]
		where := ""
		if it.In != "" {
			where = " in " + it.In
		}
		names = append(names, fmt.Sprintf("%s%s (line %d)", it.Name, where, it.Line))
		quals = append(quals, p.qualified(i))
		apart = apart || p.parent[i] != p.parent[found[0]]
	}
	if !apart {
		return fmt.Errorf("%w %q: it could be %s", ErrAmbiguous, q, strings.Join(names, ", "))
	}
	return fmt.Errorf("%w %q: it could be %s; say which, as %s", ErrAmbiguous, q, strings.Join(names, ", "), strings.Join(quals, " or "))
}

// qualified returns the name of item i with its containers,
// "explorers-pack/torches", or "/dagger" for an item in none.
func (p *parsed) qualified(i int) string {
	s := p.sh.Items[i].Slug
	j := p.parent[i]
	if j < 0 {
		return "/" + s
	}
	for n := 0; j >= 0 && n <= len(p.parent); n++ {
		s = p.sh.Items[j].Slug + "/" + s
		j = p.parent[j]
	}
	return s
}

func hasRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		ok := true
		for j := range run {
			if words[i+j] != run[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// The edits of each change, by layout.

func (p *parsed) hpEdits(hp, maxHP, temp int) ([]edit, error) {
	if p.f != nil {
		return p.f.hpEdits(p, hp, maxHP, temp)
	}
	return p.t.hpEdits(p, hp, maxHP, temp), nil
}

func (p *parsed) levelEdits(n int) ([]edit, error) {
	if p.f != nil {
		return p.f.levelEdits(p, n)
	}
	if !p.t.level.ok() {
		return nil, fmt.Errorf("the sheet has no level row: %w", ErrMissing)
	}
	text := itoa(n)
	if p.t.levelOrd != "" {
		text = ordinal(n, p.t.levelOrd)
	}
	return []edit{{p.t.level.start, p.t.level.end, text}}, nil
}

func (p *parsed) abilityEdits(i, n int) ([]edit, error) {
	if p.f != nil {
		return p.f.abilityEdits(p, i, n)
	}
	return p.t.abilityEdits(p, i, n), nil
}

func (p *parsed) qtyEdits(i, q int) ([]edit, error) {
	if p.f != nil {
		return p.f.qtyEdits(p, i, q)
	}
	return p.t.qtyEdits(p, i, q), nil
}

func (p *parsed) removeEdits(i int) ([]edit, error) {
	if p.f != nil {
		return p.f.removeEdits(p, i)
	}
	it := p.t.items[i]
	return []edit{{it.start, it.end, ""}}, nil
}

func (p *parsed) addEdits(in int, name string, q int, note string) ([]edit, Item, error) {
	if p.f != nil {
		return p.f.addEdits(p, in, name, q, note)
	}
	if in >= 0 {
		e, it := p.t.addInEdits(p, in, name, q, note)
		return []edit{e}, it, nil
	}
	e, it := p.t.addEdits(p, name, q, note)
	return []edit{e}, it, nil
}

func (p *parsed) coinEdits(denom string, at, n int) ([]edit, error) {
	if p.f != nil {
		return p.f.coinEdits(p, denom, at, n)
	}
	return p.t.coinEdits(p, denom, at, n), nil
}

// checked checks the items of a sheet read, and the ranges of its
// numbers (checkRanges).
func (p *parsed) checked() (*parsed, error) {
	if err := p.checkItems(); err != nil {
		return nil, err
	}
	p.checkRanges()
	return p, nil
}

// checkRanges notes in Sheet.Invalid, after what is noted already, a
// level and ability scores that CheckLevel and CheckScore refuse: the
// sheet reads, so that SetLevel or SetAbility can set it right.
func (p *parsed) checkRanges() {
	if p.levelSet {
		if err := CheckLevel(p.sh.Level); err != nil {
			p.invalid = append(p.invalid, &Error{Path: p.path, Line: p.levelLine, Field: "level", Err: err})
		}
	}
	if p.haveAbil {
		for a, n := range p.sh.Abilities {
			if err := CheckScore(n); err != nil {
				p.invalid = append(p.invalid, &Error{Path: p.path, Line: p.abilLines[a], Field: AbilityNames[a], Err: err})
			}
		}
	}
	switch len(p.invalid) {
	case 0:
		p.sh.Invalid = nil
	case 1:
		p.sh.Invalid = p.invalid[0]
	default:
		p.sh.Invalid = problems(p.invalid)
	}
}
