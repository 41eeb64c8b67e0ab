package dice

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Expr is a parsed dice expression. It is immutable: one Expr may be
// rolled many times, from several goroutines, each with its own Source.
type Expr struct {
	src   string  // as given
	text  string  // normalised: as given, without spaces
	root  node    // the arithmetic
	terms []*term // the dice terms, in the order they are written
	parts []part  // text split around the dice terms, for display
	check bool    // the first dice term is a d20 check (see Result.Natural)
}

// part is a piece of the normalised text: literal text, or a dice term
// (term >= 0) shown as its dice when rolled.
type part struct {
	text string
	term int
}

// String returns the expression as written, without spaces.
func (e *Expr) String() string { return e.text }

// keep modes.
const (
	keepAll = iota
	keepHigh
	keepLow
	dropLow
	dropHigh
)

// explode modes.
const (
	explodeNone = iota
	explodeAdd
	explodeCompound
	explodePenetrate
)

// term is one dice term: 4d6dl1, d20, 2d%kh1, 3d6!r1.
type term struct {
	col      int    // 1-based column of the term in the source
	notation string // as written
	count    int
	sides    int // 3 for Fudge dice
	fudge    bool
	keep     int // keepAll, keepHigh, ...
	keepN    int
	explode  int // explodeNone, explodeAdd, ...
	exCond   cond
	rerolls  []cond
	once     bool // ro: reroll once
}

// cond is a comparison with a die's face: "=" 3, "<" 3, ">=" 5.
type cond struct {
	op string
	n  int64
}

func (c cond) match(face int) bool {
	f := int64(face)
	switch c.op {
	case "<":
		return f < c.n
	case "<=":
		return f <= c.n
	case ">":
		return f > c.n
	case ">=":
		return f >= c.n
	}
	return f == c.n
}

// explodes reports whether a face sets off another roll.
func (t *term) explodes(face int) bool {
	return t.explode != explodeNone && t.exCond.match(face)
}

// rerolled reports whether a face is rerolled.
func (t *term) rerolled(face int) bool {
	for _, c := range t.rerolls {
		if c.match(face) {
			return true
		}
	}
	return false
}

// kept returns how many dice the term keeps, without explosions.
func (t *term) kept() int {
	switch t.keep {
	case keepHigh, keepLow:
		return t.keepN
	case dropLow, dropHigh:
		return t.count - t.keepN
	}
	return t.count
}

// Parse reads a dice expression. Its errors are *Error values naming the
// column.
func Parse(s string) (*Expr, error) {
	if len(s) > 4*MaxLen || len([]rune(s)) > MaxLen {
		return nil, &Error{Expr: s, Col: MaxLen + 1, Err: fmt.Errorf("the expression is %w: at most %d characters", ErrLimit, MaxLen)}
	}
	p := &parser{src: []rune(s)}
	root, err := p.parse()
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, &Error{Expr: s, Col: pe.pos + 1, Err: pe.err}
		}
		return nil, err
	}
	e := &Expr{src: s, root: root, terms: p.terms}
	// Spaces only ever separate tokens, so dropping them keeps the meaning.
	var text strings.Builder
	i := 0
	for k, t := range p.terms {
		lit := stripSpace(p.src[i:p.starts[k]])
		e.parts = append(e.parts, part{text: lit, term: -1}, part{term: k})
		text.WriteString(lit)
		text.WriteString(t.notation)
		i = p.starts[k] + len([]rune(t.notation))
	}
	lit := stripSpace(p.src[i:])
	e.parts = append(e.parts, part{text: lit, term: -1})
	text.WriteString(lit)
	e.text = text.String()
	if len(e.terms) > 0 {
		t := e.terms[0]
		e.check = t.sides == 20 && !t.fudge && t.explode == explodeNone && t.kept() == 1
	}
	return e, nil
}

func stripSpace(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		if !isSpace(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' }

// posError is a parse error at a rune index of the source.
type posError struct {
	pos int
	err error
}

func (e *posError) Error() string { return e.err.Error() }

// parser is a recursive-descent parser over the runes of one expression:
//
//	sum     = product { ("+" | "-") product }
//	product = unary { ("*" | "/") unary }
//	unary   = ("-" | "+") unary | primary
//	primary = number | dice | "(" sum ")"
//	dice    = [number] "d" (number | "%" | "F") { modifier }
type parser struct {
	src    []rune
	pos    int
	terms  []*term
	starts []int // rune index of each term
	ndice  int   // dice rolled by all terms so far
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return &posError{pos: pos, err: fmt.Errorf(format, args...)}
}

func (p *parser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// peekLower returns the next rune, lower-cased if an ASCII letter.
func (p *parser) peekLower() rune {
	r := p.peek()
	if 'A' <= r && r <= 'Z' {
		r += 'a' - 'A'
	}
	return r
}

func (p *parser) space() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func isDigit(r rune) bool { return '0' <= r && r <= '9' }

func (p *parser) parse() (node, error) {
	p.space()
	if p.pos == len(p.src) {
		return nil, p.errorf(0, "empty expression")
	}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.space()
	switch r := p.peek(); {
	case p.pos == len(p.src):
		return n, nil
	case r == ')':
		return nil, p.errorf(p.pos, `unexpected ")" with no "(" to close`)
	case r == '=':
		return nil, p.errorf(p.pos, `unexpected "=": write the face alone (!3, r1), or compare with <, >, <= or >=`)
	default:
		return nil, p.errorf(p.pos, "unexpected %s: expected + - * / or the end", quote(r))
	}
}

func (p *parser) sum() (node, error) {
	left, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		op := p.peek()
		if op != '+' && op != '-' {
			return left, nil
		}
		at := p.pos
		p.pos++
		right, err := p.product()
		if err != nil {
			return nil, err
		}
		left = &binop{op: op, col: at + 1, l: left, r: right}
	}
}

func (p *parser) product() (node, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		op := p.peek()
		if op != '*' && op != '/' {
			return left, nil
		}
		at := p.pos
		p.pos++
		right, err := p.unary()
		if err != nil {
			return nil, err
		}
		left = &binop{op: op, col: at + 1, l: left, r: right}
	}
}

func (p *parser) unary() (node, error) {
	p.space()
	switch op := p.peek(); op {
	case '-', '+':
		at := p.pos
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if op == '+' {
			return x, nil
		}
		return &negate{col: at + 1, x: x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	p.space()
	start := p.pos
	r := p.peekLower()
	switch {
	case r == '(':
		p.pos++
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.peek() != ')' {
			return nil, p.errorf(p.pos, `expected ")" to close the "(" at column %d`, start+1)
		}
		p.pos++
		return x, nil
	case isDigit(r):
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		if p.peekLower() == 'd' {
			return p.dice(start, n)
		}
		return &number{v: n}, nil
	case r == 'd':
		return p.dice(start, -1)
	case p.pos == len(p.src):
		return nil, p.errorf(p.pos, `expected a number, a die or "(" after %s`, quote(p.prev()))
	}
	return nil, p.errorf(p.pos, `unexpected %s: expected a number, a die or "("`, quote(p.peek()))
}

// prev returns the last rune before the current position that is not a
// space.
func (p *parser) prev() rune {
	for i := p.pos - 1; i >= 0; i-- {
		if !isSpace(p.src[i]) {
			return p.src[i]
		}
	}
	return 0
}

// number reads digits.
func (p *parser) number() (int64, error) {
	start := p.pos
	for isDigit(p.peek()) {
		p.pos++
	}
	n, err := strconv.ParseInt(string(p.src[start:p.pos]), 10, 64)
	if err != nil {
		return 0, &posError{pos: start, err: fmt.Errorf("number %s is %w of 64-bit integers", string(p.src[start:p.pos]), ErrLimit)}
	}
	return n, nil
}

// optNumber reads a number if there is one, or returns def.
func (p *parser) optNumber(def int64) (int64, error) {
	if !isDigit(p.peek()) {
		return def, nil
	}
	return p.number()
}

// dice reads a dice term from its "d"; count is -1 when not written.
func (p *parser) dice(start int, count int64) (node, error) {
	t := &term{col: start + 1}
	switch {
	case count == -1:
		t.count = 1
	case count < 1:
		return nil, p.errorf(start, "roll at least 1 die")
	case count > MaxCount:
		return nil, &posError{pos: start, err: fmt.Errorf("%d dice is %w: at most %d per term", count, ErrLimit, MaxCount)}
	default:
		t.count = int(count)
	}
	p.pos++ // the "d"
	sidesAt := p.pos
	switch r := p.peekLower(); {
	case r == '%':
		p.pos++
		t.sides = 100
	case r == 'f':
		p.pos++
		t.sides, t.fudge = 3, true
	case isDigit(r):
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, p.errorf(sidesAt, "a die has at least 1 side")
		}
		if n > MaxSides {
			return nil, &posError{pos: sidesAt, err: fmt.Errorf("d%d is %w: at most %d sides", n, ErrLimit, MaxSides)}
		}
		t.sides = int(n)
	default:
		return nil, p.errorf(p.pos, `expected the number of sides, "%%" or "F" after "d"`)
	}
	if err := p.modifiers(t); err != nil {
		return nil, err
	}
	t.notation = string(p.src[start:p.pos])
	if p.ndice+t.count > MaxDice {
		return nil, &posError{pos: start, err: fmt.Errorf("the expression is %w: at most %d dice in all", ErrLimit, MaxDice)}
	}
	p.ndice += t.count
	p.terms = append(p.terms, t)
	p.starts = append(p.starts, start)
	return &diceRef{i: len(p.terms) - 1}, nil
}

// modifiers reads the keep, drop, explode and reroll modifiers after a
// die, and checks they make sense together.
func (p *parser) modifiers(t *term) error {
	keepAt, explodeAt, rerollAt := -1, -1, -1
	for {
		at := p.pos
		switch p.peekLower() {
		case 'k', 'd':
			if keepAt >= 0 {
				return p.errorf(at, "a die term takes one keep or drop (the first is at column %d)", keepAt+1)
			}
			keepAt = at
			kind := p.peekLower()
			p.pos++
			switch {
			case kind == 'k' && p.peekLower() == 'l':
				p.pos++
				t.keep = keepLow
			case kind == 'k':
				if p.peekLower() == 'h' {
					p.pos++
				}
				t.keep = keepHigh
			case p.peekLower() == 'h':
				p.pos++
				t.keep = dropHigh
			default:
				if p.peekLower() == 'l' {
					p.pos++
				}
				t.keep = dropLow
			}
			nAt := p.pos
			n, err := p.optNumber(1)
			if err != nil {
				return err
			}
			if n > int64(MaxCount) {
				return p.errorf(nAt, "%d is more dice than the term can roll", n)
			}
			t.keepN = int(n)
		case '!':
			if explodeAt >= 0 {
				return p.errorf(at, `a die term explodes once (the first "!" is at column %d)`, explodeAt+1)
			}
			explodeAt = at
			p.pos++
			t.explode = explodeAdd
			switch p.peekLower() {
			case '!':
				p.pos++
				t.explode = explodeCompound
			case 'p':
				p.pos++
				t.explode = explodePenetrate
			}
			c, ok, err := p.cond()
			if err != nil {
				return err
			}
			if !ok {
				c = cond{op: "=", n: int64(t.sides)}
			}
			t.exCond = c
		case 'r':
			p.pos++
			once := false
			if p.peekLower() == 'o' {
				p.pos++
				once = true
			}
			if rerollAt >= 0 && once != t.once {
				return p.errorf(at, "a die term rerolls with r or with ro, not both")
			}
			if rerollAt < 0 {
				rerollAt = at
			}
			t.once = once
			c, ok, err := p.cond()
			if err != nil {
				return err
			}
			if !ok {
				return p.errorf(p.pos, "expected the face to reroll after %q (r1, r<3, ro1)", string(p.src[at:p.pos]))
			}
			t.rerolls = append(t.rerolls, c)
		default:
			return t.check(p, keepAt, explodeAt, rerollAt)
		}
	}
}

// cond reads an optional comparison: "3", "<3", "<=3", ">3", ">=3". There
// is no "=3": "!=3" would read as "not 3".
// ok is false when there is none.
func (p *parser) cond() (c cond, ok bool, err error) {
	at := p.pos
	switch p.peek() {
	case '<', '>':
		c.op = string(p.peek())
		p.pos++
		if p.peek() == '=' {
			c.op += "="
			p.pos++
		}
	default:
		c.op = "="
		if !isDigit(p.peek()) {
			return c, false, nil
		}
	}
	if !isDigit(p.peek()) {
		return c, false, p.errorf(p.pos, "expected a number after %q", string(p.src[at:p.pos]))
	}
	if c.n, err = p.number(); err != nil {
		return c, false, err
	}
	return c, true, nil
}

// check refuses modifiers that make no sense for the term, or that would
// roll forever.
func (t *term) check(p *parser, keepAt, explodeAt, rerollAt int) error {
	if t.fudge && explodeAt >= 0 {
		return p.errorf(explodeAt, "a Fudge die does not explode")
	}
	if t.fudge && rerollAt >= 0 {
		return p.errorf(rerollAt, "a Fudge die is not rerolled")
	}
	if keepAt >= 0 {
		grows := t.explode == explodeAdd || t.explode == explodePenetrate
		switch {
		case t.keepN < 1:
			return p.errorf(keepAt, "keep or drop at least 1 die")
		case (t.keep == keepHigh || t.keep == keepLow) && t.keepN > t.count && !grows:
			return p.errorf(keepAt, "keeps %d of %d dice", t.keepN, t.count)
		case (t.keep == dropHigh || t.keep == dropLow) && t.keepN >= t.count:
			return p.errorf(keepAt, "drops %d of %d dice, leaving none", t.keepN, t.count)
		}
	}
	all := func(match func(int) bool) bool {
		for f := 1; f <= t.sides; f++ {
			if !match(f) {
				return false
			}
		}
		return true
	}
	if explodeAt >= 0 && all(t.explodes) {
		return &posError{pos: explodeAt, err: fmt.Errorf("every face of a d%d explodes, so it %w", t.sides, ErrForever)}
	}
	if rerollAt >= 0 && !t.once && all(t.rerolled) {
		return &posError{pos: rerollAt, err: fmt.Errorf("every face of a d%d is rerolled, so it %w", t.sides, ErrForever)}
	}
	return nil
}

// quote shows a rune in an error message.
func quote(r rune) string {
	return strconv.Quote(string(r))
}
