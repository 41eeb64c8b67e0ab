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
	path string
	data []byte
	ls   []int  // the offset where each line starts
	nl   string // the file's line ending, "\n" or "\r\n"
	sh   Sheet
	keys []string // slugKey of each item, parallel to sh.Items
	t    *tables  // the tables layout's positions, or nil
	f    *front   // the frontmatter layout's positions, or nil

	hpLine, levelLine, abilLine int // 1-based, 0 when not written
	haveAbil                    bool
	curErr                      error // why the money could not be read
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

func (p *parsed) errf(line int, field, format string, args ...any) error {
	return &Error{Path: p.path, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
}

func parse(path string, data []byte) (*parsed, error) {
	p := &parsed{path: path, data: data, ls: lineStarts(data), nl: "\n"}
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
			q := &parsed{path: path, data: data, ls: p.ls, nl: p.nl, sh: p.sh}
			q.sh.Layout = Tables
			if q.parseTables(0) == nil && q.checkItems() == nil {
				return q, nil
			}
			return nil, err
		case err != nil:
			return nil, err
		case ok:
			p.sh.Layout = Frontmatter
			return p, p.checkItems()
		}
		p.f = nil
		body = f.bodyLine
	}
	p.sh.Layout = Tables
	if err := p.parseTables(body); err != nil {
		return nil, err
	}
	return p, p.checkItems()
}

// checkItems computes the items' keys and refuses two items with one.
func (p *parsed) checkItems() error {
	p.keys = make([]string, len(p.sh.Items))
	seen := make(map[string]int, len(p.sh.Items))
	for i, it := range p.sh.Items {
		k := slugKey(it.Slug)
		p.keys[i] = k
		if j, ok := seen[k]; ok {
			a := p.sh.Items[j]
			return p.errf(it.Line, "items", "%w: %q on line %d and %q on line %d", ErrDuplicateItem, a.Name, a.Line, it.Name, it.Line)
		}
		seen[k] = i
	}
	return nil
}

// exact returns the index of the item whose slug matches slug, singular
// or plural, or -1.
func (p *parsed) exact(slug string) int {
	k := slugKey(slug)
	for i, ik := range p.keys {
		if ik == k {
			return i
		}
	}
	return -1
}

// find finds the item a name or slug means: an exact match, else the one
// item whose name holds the words of q in a row.
func (p *parsed) find(q string) (int, error) {
	slug := Slug(q)
	if slug == "" {
		return -1, fmt.Errorf("%w %q", ErrUnknownItem, q)
	}
	if i := p.exact(slug); i >= 0 {
		return i, nil
	}
	want := strings.Split(slugKey(slug), "-")
	var found []int
	for i, k := range p.keys {
		if hasRun(strings.Split(k, "-"), want) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return -1, fmt.Errorf("%w %q", ErrUnknownItem, q)
	case 1:
		return found[0], nil
	}
	var names []string
	for _, i := range found {
		names = append(names, fmt.Sprintf("%s (line %d)", p.sh.Items[i].Name, p.sh.Items[i].Line))
	}
	return -1, fmt.Errorf("%w %q: it could be %s", ErrAmbiguous, q, strings.Join(names, ", "))
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

func (p *parsed) hpEdits(hp, maxHP int) ([]edit, error) {
	if p.f != nil {
		return p.f.hpEdits(p, hp, maxHP)
	}
	return p.t.hpEdits(p, hp, maxHP), nil
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

func (p *parsed) addEdits(name string, q int, note string) ([]edit, Item, error) {
	if p.f != nil {
		return p.f.addEdits(p, name, q, note)
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
